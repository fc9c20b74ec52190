import { ConfigError, parseYamlConfig } from "@envace/config";
import { z } from "zod";

const Schema = z.strictObject({ host: z.string().default("127.0.0.1"), port: z.number().int().max(65535).default(8080) });

console.log(parseYamlConfig("port: 9000\n", "server.yaml", Schema));
try {
  parseYamlConfig("host: h\nport: 99999\nprot: 1\n", "server.yaml", Schema);
} catch (error) {
  // Every problem at once, each naming the file, the line and the key.
  if (error instanceof ConfigError) console.log(error.message);
}
