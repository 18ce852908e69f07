/*
 * semaphore.pml: a counting semaphore over a quorum of independent nodes: `limit` slots, each slot
 * a quorum mutex (docs/evidence/safety.md 2.6). The naive construction, a counter per node with a majority
 * of nodes granting, is the broken variant.
 *
 * Mirrors src/primitives/semaphore.ts on src/topology/quorum.ts and src/scripts/semaphore-*.lua
 * in quorum mode. The code lets each node grant its lowest free slot and needs a majority on the
 * same slot; the model asks for one slot at a time, in order. Either way a permit is a majority
 * of one slot, which is what makes each slot a mutex.
 *
 * Abstractions
 *   - No time, no expiry, no restarts, no fences: each slot is the quorum mutex of quorum.pml, whose
 *     exclusion under expiry, drift and restarts that model checks. This model checks only how
 *     slots combine into permits, which does not depend on time.
 *   - Each request to a node is one atomic step and may be lost; a failed attempt is undone on
 *     every node where it was granted.
 *   - NCLIENTS clients (3), N nodes (3), LIMIT 2; each client tries the slots in order, holds a
 *     permit or gives up, may release, ROUNDS times.
 *
 * Property
 *   P-LIMIT  never more than LIMIT permits held at once.
 *
 * Broken variant
 *   -DNAIVE_COUNT  one counter per node, a permit granted where the counter is below LIMIT, held
 *                  with a majority of grants: {A,B}, {B,C} and {A,C} give 3 permits with limit 2.
 */

#ifndef N
#define N 3
#endif
#define MAJ (N / 2 + 1)
#ifndef NCLIENTS
#define NCLIENTS 3
#endif
#ifndef LIMIT
#define LIMIT 2
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif

#ifdef NAIVE_COUNT
byte count[N];
#else
byte slot[LIMIT * N];     /* slot s on node j: token of its holder, 0 when free */
#define SLOT(s, j) slot[(s) * N + (j)]
#endif
byte permits;

proctype Client(byte id) {
  byte r, j, s, tok, granted, votes;
  bool won;
  do
  :: r < ROUNDS ->
     r++;
     tok = id * ROUNDS + r;   /* each attempt its own token (never 0) */
     won = false;
#ifdef NAIVE_COUNT
     j = 0;
     do
     :: j < N ->
        if
        :: d_step { j++ }   /* lost */
        :: d_step {
             if
             :: count[j] < LIMIT -> count[j]++; granted = granted | (1 << j); votes++;
                printf("C%d NODE%d counts a permit (%d of %d)\n", id, j, count[j], LIMIT)
             :: else -> printf("C%d NODE%d full\n", id, j)
             fi;
             j++
           }
        fi
     :: else -> break
     od;
     skip;
     d_step {
       if
       :: votes >= MAJ -> won = true; permits++; printf("C%d PERMIT (%d held)\n", id, permits)
       :: else ->
          j = 0;
          do
          :: j < N -> if :: granted & (1 << j) -> count[j]-- :: else -> skip fi; j++
          :: else -> break
          od
       fi;
       if :: permits > LIMIT -> printf("P-LIMIT violated: %d permits held, limit %d\n", permits, LIMIT) :: else -> skip fi;
       assert(permits <= LIMIT);   /* P-LIMIT */
       j = 0
     }
#else
     s = 0;
     do
     :: !won && s < LIMIT ->
        granted = 0; votes = 0; j = 0;
        do
        :: j < N ->
           if
           :: d_step { j++ }   /* lost */
           :: d_step {
                if
                :: SLOT(s, j) == 0 -> SLOT(s, j) = tok; granted = granted | (1 << j); votes++
                :: else -> skip
                fi;
                j++
              }
           fi
        :: else -> break
        od;
        skip;
        d_step {
          if
          :: votes >= MAJ -> won = true; permits++; printf("C%d PERMIT on slot %d (%d held)\n", id, s, permits)
          :: else ->
             j = 0;
             do
             :: j < N -> if :: SLOT(s, j) == tok -> SLOT(s, j) = 0 :: else -> skip fi; j++
             :: else -> break
             od;
             s++
          fi;
          if :: permits > LIMIT -> printf("P-LIMIT violated: %d permits held, limit %d\n", permits, LIMIT) :: else -> skip fi;
          assert(permits <= LIMIT);   /* P-LIMIT */
          j = 0
        }
     :: won || s >= LIMIT -> break
     od;
#endif
     /* hold, then maybe release */
     if
     :: won ->
        if
        :: d_step {
             permits--;
#ifdef NAIVE_COUNT
             j = 0;
             do
             :: j < N -> if :: granted & (1 << j) -> count[j]-- :: else -> skip fi; j++
             :: else -> break
             od;
#else
             j = 0;
             do
             :: j < N -> if :: SLOT(s, j) == tok -> SLOT(s, j) = 0 :: else -> skip fi; j++
             :: else -> break
             od;
#endif
             j = 0; printf("C%d releases\n", id)
           }
        :: skip
        fi
     :: else -> skip
     fi;
     skip;
     d_step { granted = 0; votes = 0; s = 0; won = false }
  :: r >= ROUNDS -> break
  od
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < NCLIENTS -> run Client(i); i++
    :: else -> break
    od
  }
}
