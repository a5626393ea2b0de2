// The Vercel AI SDK example (examples/ai-sdk-memory-tools.mjs) in a real `generateText` loop:
// the AI SDK's own scripted model (ai/test MockLanguageModelV3) plays the LLM, and the tools it
// calls reach a live `mnemo serve`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, it } from "node:test";

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { Mnemo } from "mnemo-client";
import { memoryTools } from "../examples/ai-sdk-memory-tools.mjs";
import { sharedMnemo } from "./harness.mjs";

let server;
let mnemo;

before(async () => {
  server = await sharedMnemo();
  mnemo = new Mnemo({ baseUrl: server.url, apiKey: server.apiKey });
});

after(async () => {
  await server?.stop();
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function toolCall(toolName, input) {
  return {
    content: [{ type: "tool-call", toolCallId: `call-${randomUUID()}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** The last tool result the model was shown, from the prompt the AI SDK sent it. */
function lastToolOutput(prompt) {
  const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content);
  return results.at(-1)?.output;
}

it("an agent remembers a fact with one tool and recalls it with the other", async () => {
  const user = `user-${randomUUID().slice(0, 8)}`;
  const script = [
    () => toolCall("remember", { fact: "I moved to Lisbon last month" }),
    () => toolCall("recall", { query: "where does the user live" }),
    ({ prompt }) => {
      const recalled = lastToolOutput(prompt);
      assert.equal(recalled.type, "json");
      const best = recalled.value[0];
      return {
        content: [{ type: "text", text: `From memory: ${best.content}` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
  ];
  const model = new MockLanguageModelV3({ doGenerate: async (options) => script.shift()(options) });

  const result = await generateText({
    model,
    tools: memoryTools(mnemo, { userId: user }),
    stopWhen: stepCountIs(5),
    prompt: "I moved to Lisbon last month. Where do I live now?",
  });

  assert.equal(script.length, 0, "the model was asked three times");
  const [remembered] = result.steps[0].toolResults;
  assert.equal(remembered.toolName, "remember");
  assert.equal(remembered.output.stored, true);
  assert.ok(remembered.output.created >= 1);
  assert.match(result.text, /^From memory: .*Lisbon/);

  // What the tool stored is in mnemo, under that user and no other.
  const { memories } = await mnemo.memories.list({ user_id: user });
  assert.ok(memories.some((m) => /Lisbon/.test(m.content)));
  const stranger = await mnemo.memories.search({ user_id: `${user}-other`, query: "Lisbon" });
  assert.deepEqual(stranger.memories, []);
});
