/** What a task restarted after its host was lost (`on_host_loss: "restart"`) says, in its output and its status. */

/** The line the new host writes first into the restarted command's stdout. */
export function restartLine(hostId: string, lostHostId: string): string {
  return `[restarted on ${hostId} after ${lostHostId} was lost]\n`;
}

/** What a status line adds for a task restarted `restarts` times (nothing for none). */
export function restartsNote(restarts: number | undefined): string {
  if (restarts === undefined || restarts <= 0) return '';
  return ` (restarted ${restarts === 1 ? 'once' : `${restarts} times`} after its host was lost)`;
}
