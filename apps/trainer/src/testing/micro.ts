/** A run small enough for a test: a 1-layer, 32-wide model, a dozen tasks, two steps. */
export const MICRO_CONFIG = `
seed: 3
data: { source: builtin, train_tasks: 12, test_tasks: 4 }
model: { type: tiny, vocab_size: 384, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, max_position_embeddings: 512 }
sft: { epochs: 1, batch_size: 32, lr: 0.01 }
rollout: { tasks_per_step: 2, rollouts_per_task: 2, max_turns: 3, max_response_tokens: 24, max_prompt_tokens: 480, concurrency: 8, engine: tfjs }
trainer: { total_steps: 2 }
eval: { every_steps: 2, rehearsal: [none] }
`;
