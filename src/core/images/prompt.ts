/**
 * The prompt as the gateway normalizes it before sending it upstream; the answer's
 * `revised_prompt` is exactly this text.
 *
 * Rules: Unicode NFC; line endings become `\n`; control characters other than `\n` and `\t`
 * are removed; spaces and tabs at the ends of each line are removed and runs of them inside a
 * line become one space; more than two consecutive blank lines become one blank line; the whole
 * text is trimmed. The words themselves are never changed.
 */
export function normalizeImagePrompt(prompt: string): string {
  return (
    prompt
      .normalize("NFC")
      .replace(/\r\n?/g, "\n")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
      .replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, "")
      .split("\n")
      .map((line) => line.replace(/[ \t]+/g, " ").trim())
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
  );
}
