"use client";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";

/** A skill's markdown, rendered without raw HTML; links open outside, images are not fetched. */
export function SkillMarkdown({ text }: { text: string }) {
  return (
    <Markdown
      skipHtml
      remarkPlugins={[remarkGfm]}
      components={{
        a: ({ href, children }) => (
          <a href={href} target="_blank" rel="noopener noreferrer nofollow">
            {children}
          </a>
        ),
        img: ({ alt }) => <span className="muted">[image: {alt}]</span>,
        h1: ({ children }) => <h2 className="md-h1">{children}</h2>,
        h2: ({ children }) => <h3 className="md-h2">{children}</h3>,
        h3: ({ children }) => <h4 className="md-h3">{children}</h4>,
      }}
    >
      {text}
    </Markdown>
  );
}
