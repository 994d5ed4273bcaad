/**
 * Bounded capture of a process's output stream.
 * @module
 */

/** Keeps the first and last `max / 2` characters of a stream and counts what was dropped between. @internal */
export class OutputCapture {
  private head = '';
  private tail = '';
  private dropped = 0;
  constructor(private readonly max: number) {}

  push(chunk: string): void {
    const half = Math.floor(this.max / 2);
    if (this.head.length < half) {
      const room = half - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk === '') return;
    this.tail += chunk;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(this.tail.length - half);
    }
  }

  toString(): string {
    return this.dropped > 0
      ? `${this.head}\n[… ${this.dropped} characters omitted …]\n${this.tail}`
      : this.head + this.tail;
  }
}
