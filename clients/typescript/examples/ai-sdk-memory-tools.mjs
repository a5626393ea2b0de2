// Remember and recall as Vercel AI SDK tools, backed by mnemo.
//
//   import { generateText, stepCountIs } from "ai";
//   import { Mnemo } from "mnemo-client";
//   import { memoryTools } from "./ai-sdk-memory-tools.mjs";
//
//   const mnemo = new Mnemo(); // MNEMO_URL and MNEMO_API_KEY from the environment
//   const { text } = await generateText({
//     model,                                   // any AI SDK model, e.g. openai("gpt-4o-mini")
//     tools: memoryTools(mnemo, { userId: "ada" }),
//     stopWhen: stepCountIs(5),
//     prompt: "I moved to Lisbon last month. Where do I live?",
//   });
//
// The user id is fixed by the application, never chosen by the model: an agent acting for
// one user sees only that user's memories. Tested by test/ai-sdk.test.mjs with a scripted model.
import { tool } from "ai";
import { z } from "zod";

/**
 * `remember` stores a fact about the user and waits until mnemo has processed it (so a recall
 * in the next step finds it); `recall` searches the user's memories, best match first.
 *
 * @param {import("mnemo-client").Mnemo} mnemo
 * @param {{ userId: string, group?: string, limit?: number }} scope
 */
export function memoryTools(mnemo, { userId, group, limit = 5 }) {
  return {
    remember: tool({
      description: "Store a fact about the user that is worth remembering in later conversations.",
      inputSchema: z.object({
        fact: z.string().min(1).describe("One self-contained fact, in the user's words where possible"),
      }),
      execute: async ({ fact }) => {
        const { run_id } = await mnemo.memories.add({ user_id: userId, group, text: fact });
        const run = await mnemo.runs.wait(run_id);
        if (run.status === "failed") return { stored: false, error: run.error };
        const ops = run.committed_operations ?? {};
        return { stored: true, created: ops.created?.length ?? 0, updated: ops.updated?.length ?? 0 };
      },
    }),
    recall: tool({
      description: "Search what is remembered about the user. Use it before answering personal questions.",
      inputSchema: z.object({
        query: z.string().min(1).describe("What to look for, as a question or keywords"),
      }),
      execute: async ({ query }) => {
        const { memories } = await mnemo.memories.search({
          user_id: userId,
          group,
          query,
          retrieval_config: { limit },
        });
        return memories.map((m) => ({ id: m.id, content: m.content, score: m.score }));
      },
    }),
  };
}
