import { EnvaceError } from "@envace/errors";
import { PolicyRole } from "@envace/protocol";
import { z } from "zod";

/**
 * Which parameter set (policy) plays each role. The paper shares one policy between Act and
 * Rehearse; the per-role-policy variant gives each role its own parameters. Rows are always
 * trained by the policy that generated them, so the routing used for sampling must be the one
 * used for training.
 */
export const PolicyRouting = z.partialRecord(PolicyRole, z.string().min(1));
export type PolicyRouting = z.infer<typeof PolicyRouting>;

/** Every role played by one policy named `id` (the paper's setting). */
export function sharedPolicy(id = "policy"): PolicyRouting {
  return Object.fromEntries(PolicyRole.options.map((role) => [role, id]));
}

/** A role that no policy of the routing plays. */
export class PolicyRoutingError extends EnvaceError {
  override readonly code = "policy-routing";
}

/** The policy that plays `role`, or an error naming the role and the routes that exist. */
export function policyFor(routing: PolicyRouting, role: PolicyRole): string {
  const id = routing[role];
  if (id === undefined) {
    const routes = Object.entries(routing)
      .map(([r, p]) => `${r}→${p}`)
      .join(", ");
    throw new PolicyRoutingError(`no policy plays the role "${role}" (routes: ${routes || "none"})`);
  }
  return id;
}

/** The distinct policies of a routing, in first-seen order. */
export function policiesOf(routing: PolicyRouting): string[] {
  return [...new Set(Object.values(routing))];
}

/**
 * Split training items by the policy that generated them. Every policy of the routing gets an
 * entry (possibly empty), so a step can tell "no rows" from "no policy".
 */
export function routeByPolicy<T extends { row: { role: PolicyRole } }>(items: readonly T[], routing: PolicyRouting): Map<string, T[]> {
  const routed = new Map<string, T[]>(policiesOf(routing).map((id) => [id, []]));
  for (const item of items) routed.get(policyFor(routing, item.row.role))!.push(item);
  return routed;
}
