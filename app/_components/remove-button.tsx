/** The small "✕" that removes one item of a list a person is editing; `label` says which item. */
export function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" className="btn btn-sm" aria-label={label} onClick={onClick}>
      ✕
    </button>
  );
}
