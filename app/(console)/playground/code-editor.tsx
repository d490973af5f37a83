"use client";
/**
 * Monaco from the installed package (no CDN): workers bundled by URL, typings for the mounted
 * `toolstore/*` modules added as an extra lib, Ctrl/Cmd+Enter bound to Run. Loaded with
 * next/dynamic({ ssr: false }); uncontrolled (defaultValue) so typing never drops keystrokes.
 */
import Editor, { loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";
import { useEffect, useImperativeHandle, useRef, useState } from "react";

type MonacoEnv = { getWorker(id: string, label: string): Worker };
(self as unknown as { MonacoEnvironment: MonacoEnv }).MonacoEnvironment = {
  getWorker(_id, label) {
    if (label === "typescript" || label === "javascript") {
      return new Worker(new URL("monaco-editor/language/typescript/ts.worker", import.meta.url), {
        type: "module",
      });
    }
    return new Worker(new URL("monaco-editor/editor/editor.worker", import.meta.url), { type: "module" });
  },
};
loader.config({ monaco });

const js = monaco.typescript.javascriptDefaults;
js.setCompilerOptions({
  target: monaco.typescript.ScriptTarget.ESNext,
  module: monaco.typescript.ModuleKind.ESNext,
  moduleResolution: monaco.typescript.ModuleResolutionKind.NodeJs,
  allowJs: true,
  checkJs: true,
  allowNonTsExtensions: true,
  // The sandbox has no DOM, timers or Node: only the language and the declared modules.
  lib: ["lib.es2022.d.ts"],
});
js.setDiagnosticsOptions({ noSemanticValidation: false, noSyntaxValidation: false });
js.setEagerModelSync(true);

const TYPINGS_PATH = "file:///node_modules/@types/toolstore/index.d.ts";
let typingsLib: monaco.IDisposable | undefined;

export interface CodeEditorHandle {
  getValue(): string;
  /** Replaces the text as one undoable edit. */
  replace(text: string): void;
  focus(): void;
}

function currentTheme(): "vs" | "vs-dark" {
  return document.documentElement.dataset.theme === "dark" ? "vs-dark" : "vs";
}

export default function CodeEditor({
  defaultValue,
  typings,
  onRun,
  onChange,
  handleRef,
}: {
  defaultValue: string;
  typings: string | undefined;
  onRun: () => void;
  onChange: (code: string) => void;
  handleRef: React.Ref<CodeEditorHandle>;
}) {
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  const onRunRef = useRef(onRun);
  onRunRef.current = onRun;
  const [theme, setTheme] = useState<"vs" | "vs-dark">(currentTheme);

  useEffect(() => {
    const observer = new MutationObserver(() => setTheme(currentTheme()));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    if (typings === undefined) return;
    typingsLib?.dispose();
    typingsLib = js.addExtraLib(typings, TYPINGS_PATH);
  }, [typings]);

  useImperativeHandle(handleRef, () => ({
    getValue: () => editorRef.current?.getValue() ?? "",
    replace(text) {
      const editor = editorRef.current;
      const model = editor?.getModel();
      if (!editor || !model) return;
      editor.pushUndoStop();
      editor.executeEdits("examples", [{ range: model.getFullModelRange(), text }]);
      editor.pushUndoStop();
      editor.setPosition({ lineNumber: 1, column: 1 });
      editor.focus();
    },
    focus: () => editorRef.current?.focus(),
  }));

  return (
    <Editor
      defaultLanguage="javascript"
      path="file:///action.js"
      defaultValue={defaultValue}
      theme={theme}
      loading={<div className="editor-loading muted">Loading the editor…</div>}
      onChange={(value) => onChange(value ?? "")}
      options={{
        minimap: { enabled: false },
        fontSize: 13,
        tabSize: 2,
        scrollBeyondLastLine: false,
        automaticLayout: true,
        fixedOverflowWidgets: true,
        wordWrap: "on",
        ariaLabel: "Action code. Ctrl+Enter runs it; Ctrl+M makes Tab move focus out of the editor.",
        quickSuggestions: { other: true, strings: true, comments: false },
      }}
      onMount={(editor) => {
        editorRef.current = editor;
        editor.addAction({
          id: "toolstore.run",
          label: "Run action",
          keybindings: [monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter],
          run: () => onRunRef.current(),
        });
      }}
    />
  );
}
