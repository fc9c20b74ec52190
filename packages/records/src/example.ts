import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson, contentHash, JsonLinesFile } from "@envace/records";
import { z } from "zod";

// Equal values give equal text and equal hashes, whatever order their keys were built in.
console.log(canonicalJson({ b: 1, a: [true, null] })); // {"a":[true,null],"b":1}
console.log(contentHash({ b: 1, a: [true, null] }) === contentHash({ a: [true, null], b: 1 })); // true

// A run killed mid-write left its last line cut short.
const path = join(mkdtempSync(join(tmpdir(), "records-")), "entries.jsonl");
writeFileSync(path, '{"id":"t1","reward":1}\n{"id":"t2","rew');

const Entry = z.object({ id: z.string(), reward: z.number() });
const entries = JsonLinesFile.open(path, Entry, { onTornLine: (torn) => console.log(`redoing the record of line ${torn.line}`) });
console.log(entries.records); // [ { id: 't1', reward: 1 } ]
entries.append({ id: "t2", reward: 0 }); // on a fresh line: the torn one was cut off
