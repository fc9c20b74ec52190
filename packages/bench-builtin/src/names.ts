/**
 * The closed vocabulary of names. Short invented words keep a whole trajectory small and let a
 * tokenizer trained on the domain corpus hold every name; user and item names never overlap, so a
 * name alone says what it denotes.
 */
export const USER_NAMES = ["ada", "bela", "cara", "dino", "eli", "fumi", "gus", "hana", "ivo", "juno", "kai", "lena", "milo", "nora", "oto", "pia"] as const;

export const ITEM_NAMES = [
  "kelo",
  "mivo",
  "suta",
  "rabo",
  "tiki",
  "voba",
  "zeno",
  "lupa",
  "doro",
  "famu",
  "gira",
  "nolo",
  "pexa",
  "quba",
  "sorn",
  "wiko",
] as const;

/** Order ids are `o1`, `o2`, … in creation order. */
export function orderId(index: number): string {
  return `o${index}`;
}
