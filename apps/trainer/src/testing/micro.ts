/** A run small enough for a test: a fresh 1-layer, 32-wide model warm-started by SFT, a dozen tasks, two steps. */
export const MICRO_CONFIG = `
seed: 3
init_from: null
data: { source: builtin, train_tasks: 12, test_tasks: 4 }
model: { type: tiny, vocab_size: 384, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, max_position_embeddings: 512, initializer_range: 0.02 }
sft: { enabled: true, epochs: 1, batch_size: 32, lr: 0.01 }
rollout: { tasks_per_step: 2, rollouts_per_task: 2, max_turns: 3, max_response_tokens: 24, max_prompt_tokens: 480, concurrency: 8, engine: tfjs }
actor: { lr: 0.0001 }
reward: { type: verifiable }
trainer: { total_steps: 2, save_every: 1 }
eval: { every_steps: 2, rehearsal: [none] }
`;
