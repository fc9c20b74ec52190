import { envaceConfig } from "@envace/eslint-config";

export default envaceConfig(import.meta.dirname);
