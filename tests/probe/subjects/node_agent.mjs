// A probe subject in JavaScript: a Chat Completions tool loop over fetch (Node 20), no SDK.
// It reads OPENAI_BASE_URL and OPENAI_API_KEY as the official SDKs do, the prompt from stdin,
// and prints the final answer. One tool, `add`; a bad call gets an error text back.
const base = process.env.OPENAI_BASE_URL;
const key = process.env.OPENAI_API_KEY;
const broken = process.argv.includes("--skip-results");  // a deliberately broken variant
let prompt = "";
for await (const chunk of process.stdin) prompt += chunk;

const tools = [{
  type: "function",
  function: {
    name: "add", description: "Add two integers.",
    parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"], additionalProperties: false },
  },
}];

function runTool(name, argsText) {
  if (name !== "add") return `Tool ${name} not found`;
  let args;
  try { args = JSON.parse(argsText); } catch (e) { return `Invalid arguments for tool "add": not valid JSON`; }
  if (typeof args !== "object" || args === null || !Number.isInteger(args.a) || !Number.isInteger(args.b)) {
    return `Validation failed for tool "add": a and b must be integers`;
  }
  return String(args.a + args.b);
}

const messages = [{ role: "user", content: prompt }];
for (let i = 0; i < 8; i++) {
  let resp;
  for (let attempt = 0; ; attempt++) {
    resp = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "gpt-4o-mini", messages, tools }),
    });
    if ((resp.status === 429 || resp.status >= 500) && attempt < 2) {
      const wait = Number(resp.headers.get("retry-after") ?? "0.5");
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    break;
  }
  if (!resp.ok) { console.error(`HTTP ${resp.status}: ${await resp.text()}`); process.exit(1); }
  const message = (await resp.json()).choices[0].message;
  messages.push(message);
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) { process.stdout.write(message.content ?? ""); process.exit(0); }
  for (const call of broken ? calls.slice(0, 1) : calls) {
    messages.push({ role: "tool", tool_call_id: call.id, content: runTool(call.function.name, call.function.arguments) });
  }
}
console.error("gave up after 8 model calls");
process.exit(1);
