/**
 * The first `k` of `items` in the order `compare` gives, in that order: a heap of the best `k` seen so far (its root
 * the worst of them) meets each item once, so ranking hundreds of candidates for a page of 20 costs about one
 * comparison per candidate instead of a full sort's ~log2(n). `compare` must be a total order (ties broken), as
 * `Array.prototype.sort` wants too; the result is then exactly the sorted array's first `k`.
 */
export function firstInOrder<T>(items: readonly T[], compare: (a: T, b: T) => number, k: number): T[] {
  const heap: T[] = [];
  if (k <= 0) return heap;
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      siftUp(heap, heap.length - 1, compare);
    } else if (compare(item, heap[0] as T) < 0) {
      heap[0] = item;
      siftDown(heap, 0, compare);
    }
  }
  return heap.sort(compare);
}

// Moves the item at `at` up while it comes after its parent (the root is the one that comes last).
function siftUp<T>(heap: T[], at: number, compare: (a: T, b: T) => number): void {
  const item = heap[at] as T;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (compare(item, heap[parent] as T) <= 0) break;
    heap[at] = heap[parent] as T;
    at = parent;
  }
  heap[at] = item;
}

// Moves the item at `at` down while a child comes after it.
function siftDown<T>(heap: T[], at: number, compare: (a: T, b: T) => number): void {
  const item = heap[at] as T;
  const size = heap.length;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= size) break;
    if (child + 1 < size && compare(heap[child + 1] as T, heap[child] as T) > 0) child++;
    if (compare(heap[child] as T, item) <= 0) break;
    heap[at] = heap[child] as T;
    at = child;
  }
  heap[at] = item;
}
