import Link from "next/link";
import { RelativeTime } from "@/app/_components/relative-time";
import type { getRunDetail } from "@/server/services/runs";

type Parked = NonNullable<Awaited<ReturnType<typeof getRunDetail>>["parked"]>;

/**
 * For a parked run: nothing of it is in memory, it waits as a row for one approval, and after the
 * answer any instance resumes it by replaying the action from its journal.
 */
export function ParkedNote({ parked }: { parked: Parked }) {
  const approval = parked.approvalId ? (
    <Link href={`/approvals#${parked.approvalId}`} data-testid="parked-approval">
      the approval
      {parked.capability ? (
        <>
          {" "}
          for <code>{parked.capability}</code>
        </>
      ) : null}
    </Link>
  ) : (
    "an approval"
  );
  return (
    <section className="card" aria-labelledby="parked-h" data-testid="parked-note" style={{ marginTop: 12 }}>
      <h2 id="parked-h">Parked: waiting for a human</h2>
      <p>
        {parked.since ? (
          <>
            Parked <RelativeTime value={parked.since} />: this
          </>
        ) : (
          "This"
        )}{" "}
        run is a row and its journal, with nothing in memory. It waits for {approval}
        {parked.kind === "uncertain"
          ? ", which asks whether a call that may already have happened should run again."
          : "."}{" "}
        Once it is answered, the action resumes by replay: the calls it already made are answered from the
        journal, and only the rest runs.
      </p>
    </section>
  );
}
