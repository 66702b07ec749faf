/** The last ids seen, up to a bound: what an agent host remembers to tell a repeat from a first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly bound: number) {}

  /** Remembers `id`; false when it was already remembered. The oldest is forgotten past the bound. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.bound) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return true;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}
