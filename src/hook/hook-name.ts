/**
 * A hook's `Name`: an optional label its owner chooses, unique among the owner's
 * hooks, usable wherever an Id is (`/hooks/{id-or-name}`, `hookctl get NAME`) and the key that
 * `hookctl apply` matches files to hooks by.
 *
 * Names are lower-case; generated Ids (`hk_` + upper-case Crockford base32) are not, so a name
 * never equals an Id hookd made. `/hooks/{x}` looks `x` up as an Id first and then as a name.
 */
export const NAME_SHAPE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** The rule as the 400 problem states it. */
export const NAME_RULE =
  'must be 1 to 63 characters from a-z, 0-9, ".", "_" and "-", starting with a letter or digit (e.g. "orders-created")';

/** Whether `text` can be a hook name. */
export function isHookName(text: string): boolean {
  return NAME_SHAPE.test(text);
}
