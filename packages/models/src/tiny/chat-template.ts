/**
 * How both templates end, from an assistant turn's tool calls on: each call as `callBlock` renders
 * it, a tool result as a `<tool_response>` block in a user turn (`pad` inside its tags), any other
 * turn as plain ChatML, then the header of the turn to generate.
 */
function callsToEnd(callBlock: string, pad: string): string {
  return `    {%- for call in message.tool_calls or [] %}
${callBlock}
    {%- endfor %}
    {{- '<|im_end|>\\n' }}
  {%- elif message.role == 'tool' %}
    {{- '<|im_start|>user\\n<tool_response>${pad}' + message.content + '${pad}</tool_response><|im_end|>\\n' }}
  {%- else %}
    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}`;
}

/**
 * The chat template of the built-in tiny model, for checkpoints whose `tokenizer_config.json`
 * carries none. ChatML turns (`<|im_start|>role … <|im_end|>`), tools listed as JSON lines in the
 * system turn, assistant tool calls as `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks
 * (the format the Act parser reads), reasoning in `<think>` blocks, and tool results as
 * `<tool_response>` blocks in a user turn — the same shapes as Qwen3, so prompts and parsers
 * carry over between the tiny model and real ones.
 */
export const TINY_CHAT_TEMPLATE = `{%- if tools %}
  {{- '<|im_start|>system\\n' }}
  {%- if messages and messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
  {{- '# Tools\\n\\nTo call a tool, write <tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call>. The tools:\\n<tools>' }}
  {%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}
  {{- '\\n</tools><|im_end|>\\n' }}
{%- elif messages and messages[0].role == 'system' %}
  {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
  {%- if message.role == 'system' and loop.first %}
  {%- elif message.role == 'assistant' %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if message.reasoning_content %}{{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n\\n' }}{%- endif %}
    {{- message.content or '' }}
${callsToEnd(
  `      {%- if (not loop.first) or message.content %}{{- '\\n' }}{%- endif %}
      {{- '<tool_call>\\n{"name": "' + call.function.name + '", "arguments": ' + call.function.arguments + '}\\n</tool_call>' }}`,
  "\\n",
)}`;

/**
 * `TINY_CHAT_TEMPLATE` without the tool list and the reasoning, for domains whose system prompt
 * already names the tools (the built-in shop): ChatML turns, compact `<tool_call>` blocks and
 * `<tool_response>` blocks, which keeps prompts within a tiny context.
 */
export const TINY_COMPACT_CHAT_TEMPLATE = `{%- for message in messages %}
  {%- if message.role == 'assistant' %}
    {{- '<|im_start|>assistant\\n' + (message.content or '') }}
${callsToEnd(`      {{- '<tool_call>{"name":"' + call.function.name + '","arguments":' + call.function.arguments + '}</tool_call>' }}`, "")}`;
