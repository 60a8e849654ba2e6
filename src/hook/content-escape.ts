/**
 * `ContentEscape`: the escaping a hook's chat receiver needs on top of the media type's own
 * (JSON, XML, form). Substituted values come from whoever sends a request through hookd; a chat
 * service reads markup in them (`<!channel>`, `[text](url)`, `@everyone`), so without this a
 * stranger's path could ping a whole channel or plant a link in another user's chat. The choices
 * and their reasons are in docs/DECISIONS.md "Chat markup in templates".
 */

/** The modes a hook can ask for; `none` is the default. */
export const CONTENT_ESCAPES = ['none', 'slack', 'mattermost', 'discord', 'markdown'] as const;
export type ContentEscape = (typeof CONTENT_ESCAPES)[number];

type Escape = (value: string) => string;

/** Slack's three (api.slack.com "Escaping text"); Mattermost's Slack-compatible text reads the same. */
const SLACK_SPECIAL = /[&<>]/;
const SLACK_CHARS = /[&<>]/g;
const SLACK_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const slack: Escape = (v) => (SLACK_SPECIAL.test(v) ? v.replace(SLACK_CHARS, (c) => SLACK_ENTITIES[c]!) : v);

/**
 * The ASCII punctuation CommonMark (and Discord's and Teams' dialects of it) give a meaning:
 * emphasis, code, links and images, headings, lists, quotes, tables, spoilers, HTML and entities.
 * Every one of them may be backslash-escaped in CommonMark, which then shows it as itself; `!`
 * needs none, as an image needs the `[` that is escaped.
 */
const MARKDOWN_CHARS = /[\\`*_~|[\]()#+\-.<>&]/g;
const MARKDOWN_SPECIAL = /[\\`*_~|[\]()#+\-.<>&]/;
const markdown: Escape = (v) => (MARKDOWN_SPECIAL.test(v) ? v.replace(MARKDOWN_CHARS, '\\$&') : v);

/**
 * A zero-width space after `@`: `@everyone`, `@here`, `@channel` and `@all` read the same to a
 * person and ping nobody (a backslash does not stop every service's mention parser).
 */
const AT = /@/g;
const ZWSP_AFTER_AT = '@\u200b';
const mentions: Escape = (v) => (v.includes('@') ? v.replace(AT, ZWSP_AFTER_AT) : v);

/**
 * Mattermost renders Markdown and also expands Slack's `<!channel>` before it does, so `<`, `>`
 * and `&` become entities (which its Markdown shows as the characters) rather than backslashed.
 */
const MATTERMOST_CHARS = /[\\`*_~|[\]()#+\-.]/g;
const mattermost: Escape = (v) => mentions(slack(v).replace(MATTERMOST_CHARS, '\\$&'));

const ESCAPES: Record<ContentEscape, Escape | undefined> = {
  none: undefined,
  slack,
  mattermost,
  discord: (v) => mentions(markdown(v)),
  markdown,
};

/** The escape of a mode, or undefined for `none` (and for no mode at all). */
export function contentEscapeOf(mode: ContentEscape | undefined): Escape | undefined {
  return mode === undefined ? undefined : ESCAPES[mode];
}
