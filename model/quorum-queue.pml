/*
 * quorum-queue.pml: all-or-nothing waiters on a quorum of N independent masters (N = 3), each
 * standing in the fair queue of every resource it asks for on every node, model-checked with SPIN
 * for progress: when every waiter has made ROUNDS attempts, somebody got the locks.
 *
 * Mirrors
 *   src/primitives/multi/multi-acquire.lua on a quorum node: a waiter is granted there only if no
 *     lock it asks for is held and it stands first in every one of its queues (ZADD LT keeps the
 *     lowest score a waiter ever had on that node);
 *   src/topology/quorum/attempt.ts: an attempt runs on every node; a majority of grants wins,
 *     anything less is undone on every node (the waiter keeps its places: the undo puts them back);
 *   src/topology/quorum/waiters.ts (WaiterBook.scoreOf): the score a waiter's places carry.
 *
 * The case (issue 45, the quorum transfer stall): a process's first waiter is sent before the
 * process has seen any server TIME, with no shared score (''): each node scores it with its own
 * arrival time, and keeps that score while the waiter stands in line there. Arrival orders differ
 * per node, so the nodes' queues order the waiters differently; with three waiters in a cycle
 * (node 0: A B C, node 1: B C A, node 2: C A B) each is first on one node only, each attempt wins
 * one node, is undone, and is tried again: nobody ever gets a majority. Seen in a loaded run: six
 * processes of transfers stalled for 50 s, the per-node queues of accounts 1 to 4 in such a cycle.
 *
 * Abstractions
 *   - All W waiters ask for the same resources, so a node's queues are one order of the waiters
 *     (a waiter's score is the same in all its queues on one node: one script places it in all).
 *   - Every waiter stands in line on every node from the start (the state after the first
 *     attempts), and keeps its places while it tries (each attempt refreshes them: no expiry).
 *   - One node's step of an attempt is atomic (a script); other waiters interleave between nodes.
 *     The undo and the release reach every node in one step each.
 *   - A waiter that got the locks releases them and leaves every queue; it does not come back.
 *
 * Property (assertion)
 *   P-PROGRESS  once every waiter has made ROUNDS attempts (or got the locks), some waiter got them.
 *
 * The rule and its broken variant
 *   (default)       one global order: a waiter's score is fixed before it takes any place and is
 *                   the same on every node, so every node orders the waiters alike;
 *   -DLOCAL_ORDER   each node orders the waiters by its own arrival order (any permutation per
 *                   node): SPIN must find the cycle.
 */

#ifndef W
#define W 3
#endif
#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define MAJ (N / 2 + 1)
#define FREE 255

byte rank[N * W];    /* rank[n * W + w]: waiter w's place in node n's queues (0 = first) */
byte holder[N];      /* who holds the locks on node n (FREE: nobody) */
bool done[W];        /* waiter w got the locks (and left every queue) */
byte acquired = 0;
byte finished = 0;   /* waiters that got the locks or made ROUNDS attempts */

/* Waiter w stands first on node n: nobody still in line is ahead of it there. */
#define ahead(n, w, v) (v != w && !done[v] && rank[n * W + v] < rank[n * W + w])
#define first(n, w) (!ahead(n, w, 0) && !ahead(n, w, 1) && !ahead(n, w, 2))

/* One order of the W waiters, chosen by arrival: into rank[base .. base + W - 1]. */
inline arrive(base) {
  if
  :: rank[base] = 0; rank[base + 1] = 1; rank[base + 2] = 2
  :: rank[base] = 0; rank[base + 1] = 2; rank[base + 2] = 1
  :: rank[base] = 1; rank[base + 1] = 0; rank[base + 2] = 2
  :: rank[base] = 1; rank[base + 1] = 2; rank[base + 2] = 0
  :: rank[base] = 2; rank[base + 1] = 0; rank[base + 2] = 1
  :: rank[base] = 2; rank[base + 1] = 1; rank[base + 2] = 0
  fi
}

proctype Waiter(byte w) {
  byte round = 0;
  byte n;
  byte got;
  do
  :: round < ROUNDS ->
    got = 0;
    n = 0;
    do
    :: n < N ->
      atomic {
        if
        :: holder[n] == FREE && first(n, w) -> holder[n] = w; got++
        :: else -> skip
        fi
      }
      n++
    :: n == N -> break
    od;
    if
    :: got >= MAJ ->
      atomic {
        printf("waiter %d got the locks on %d nodes (attempt %d)\n", w, got, round + 1);
        done[w] = true;
        acquired++
      }
    :: else -> printf("waiter %d won %d node(s) of %d, undone (attempt %d)\n", w, got, N, round + 1)
    fi;
    /* The release (or the undo) on every node. */
    atomic {
      n = 0;
      do
      :: n < N -> if :: holder[n] == w -> holder[n] = FREE :: else -> skip fi; n++
      :: n == N -> break
      od
    }
    if
    :: done[w] -> break
    :: else -> round++
    fi
  :: round == ROUNDS -> break
  od;
  finished++
}

init {
  byte n = 0;
  atomic {
    do
    :: n < N -> holder[n] = FREE; n++
    :: n == N -> break
    od;
#ifdef LOCAL_ORDER
    arrive(0); arrive(W); arrive(2 * W);
    printf("node orders (rank of waiters 0 1 2): node 0: %d %d %d, node 1: %d %d %d, node 2: %d %d %d\n",
      rank[0], rank[1], rank[2], rank[3], rank[4], rank[5], rank[6], rank[7], rank[8]);
#else
    arrive(0);
    n = 0;
    do
    :: n < W -> rank[W + n] = rank[n]; rank[2 * W + n] = rank[n]; n++
    :: n == W -> break
    od;
#endif
    run Waiter(0); run Waiter(1); run Waiter(2)
  }
  (finished == W) ->
  if :: acquired == 0 -> printf("P-PROGRESS violated: %d waiters made %d attempts each, none got the locks\n", W, ROUNDS) :: else -> skip fi;
  assert(acquired > 0) /* P-PROGRESS */
}
