"use client";
/**
 * The console's one markdown renderer (GitHub-flavoured, via react-markdown + remark-gfm) for text
 * that people or toolsets wrote: raw HTML is dropped, links open outside the console, and images are
 * named instead of fetched. The page keeps its own h1, so the document's headings sit one level below.
 */
import type { ReactNode } from "react";
import Markdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import "./markdown-view.css";

const COMPONENTS: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ),
  // An image would be a request to wherever the document points.
  img: ({ alt }) => <span className="muted">[image: {alt}]</span>,
  h1: ({ children }) => <h2 className="md-h1">{children}</h2>,
  h2: ({ children }) => <h3 className="md-h2">{children}</h3>,
  h3: ({ children }) => <h4 className="md-h3">{children}</h4>,
};

export function MarkdownView({
  text,
  empty,
  testId,
}: {
  text: string;
  /** Shown in place of the document when the text is blank. */
  empty?: ReactNode;
  testId?: string;
}) {
  return (
    <div className="markdown" data-testid={testId}>
      {text.trim() ? (
        <Markdown skipHtml remarkPlugins={[remarkGfm]} components={COMPONENTS}>
          {text}
        </Markdown>
      ) : (
        empty
      )}
    </div>
  );
}
