export function Forbidden({ need, have }: { need: string; have: string }) {
  return (
    <div className="card empty" role="alert">
      <strong>
        <code>FORBIDDEN</code> This page needs the {need} role.
      </strong>
      You are signed in as {have}. Ask an admin to change your role.
    </div>
  );
}
