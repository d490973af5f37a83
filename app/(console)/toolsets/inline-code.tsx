/** Text with `backtick` spans shown as code (descriptions come from doc comments); never HTML. */
export function InlineCode({ text }: { text: string }) {
  const parts = text.split("`");
  if (parts.length < 3) return <>{text}</>;
  return (
    <>
      {parts.map((part, i) =>
        // Odd parts sit between backticks; an unmatched last backtick stays text.
        i % 2 === 1 && i < parts.length - 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts of one fixed string
          <code key={i}>{part}</code>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts of one fixed string
          <span key={i}>{i % 2 === 1 ? `\`${part}` : part}</span>
        ),
      )}
    </>
  );
}
