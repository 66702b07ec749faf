/**
 * Workflow patches (`patched(id)`) shared by more than one workflow module. A patch marks runs
 * recorded after a change, so runs recorded before it replay the old way.
 */

/** Runs recorded before hosts had a control queue sent their stops and stdin writes to the host queue. */
export const CONTROL_QUEUE_PATCH = 'control-queue';
