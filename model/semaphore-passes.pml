/*
 * semaphore-passes.pml: the semaphore's grant rule on one node with `fair: false` (barging bounded
 * by MAX_PASSES), weighted permits, a fair caller among unfair ones, tryAcquire and acquire.
 *
 * Mirrors src/primitives/semaphore/semaphore-acquire.lua: one attempt is one atomic step (a Lua
 * script). `ahead` is the caller's place in line (ZRANK), or the length of the line for a caller
 * not in it (ZCARD); demand ahead is the permits the waiters ahead wait for. A grant is in turn when
 * the free permits cover this caller's and every waiter's ahead of it (the fair FIFO rule); with
 * `fair: false` it may also pass the line while the pass count is below MAXP; a grant in turn with
 * nobody ahead (the waiter first in line, or an empty line) resets the count.
 *
 * Abstractions
 *   - No time, no expiry, no fences, no quorum: each permit is a slot key on one node; how slots
 *     combine over a quorum is semaphore.pml's, and does not depend on who may take a free slot.
 *   - Wake-ups are not modelled: a waiter may look again at any time (a release's message, its
 *     re-check or its standby timer), which covers every order the messages can arrive in.
 *   - NCLIENTS clients (3): client 0 takes NEED0 permits (2 by default), the others 1; the last
 *     client is fair (keeps to the line), the others `fair: false`. LIMIT 2, MAXP 1, ROUNDS 2.
 *     A refused attempt joins the line (acquire); waiters do not give up (a waiter that leaves
 *     only makes the line shorter).
 *
 * Properties
 *   P-LIMIT  never more than LIMIT permits held at once.
 *   P-PASS   the waiter first in line is passed (a grant not in turn while it waits first) at most
 *            MAXP times before it is served.
 *
 * Broken variants
 *   -DNO_PASS_BOUND       barging without the count: a waiter first in line can be passed forever
 *   -DPASS_ONE_FREE       a pass when one permit is free, whatever the caller takes: more than LIMIT
 *   -DRESET_ANY_IN_TURN   any grant in turn resets the count, also one to a waiter behind the first
 */

#ifndef NCLIENTS
#define NCLIENTS 3
#endif
#ifndef LIMIT
#define LIMIT 2
#endif
#ifndef MAXP
#define MAXP 1
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef NEED0
#define NEED0 2
#endif
#define NEED(c) ((c) == 0 -> NEED0 : 1)
#define FAIR(c) ((c) == NCLIENTS - 1)

byte held;                  /* permits held */
byte line[NCLIENTS];        /* client id + 1, FIFO; 0 = empty */
byte qlen;
byte passes;                /* the passes key */
byte headPassed;            /* the property's own count: passes since the first in line became first */

proctype Client(byte id) {
  byte r, i, ahead, demand, need;
  bool queued, inTurn, pass, granted;
  need = NEED(id);
  do
  :: r < ROUNDS ->
     r++;
     granted = false;
     do
     :: !granted ->
        d_step {
          /* ahead: rank in line, or the line's length */
          ahead = qlen; i = 0;
          do
          :: i < qlen -> if :: line[i] == id + 1 -> ahead = i; break :: else -> i++ fi
          :: else -> break
          od;
          demand = 0; i = 0;
          do
          :: i < ahead -> demand = demand + NEED(line[i] - 1); i++
          :: else -> break
          od;
          inTurn = (LIMIT - held >= need + demand);
#ifdef PASS_ONE_FREE
          pass = (!inTurn && !FAIR(id) && ahead > 0 && LIMIT - held >= 1 && passes < MAXP);
#else
#ifdef NO_PASS_BOUND
          pass = (!inTurn && !FAIR(id) && ahead > 0 && LIMIT - held >= need);
#else
          pass = (!inTurn && !FAIR(id) && ahead > 0 && LIMIT - held >= need && passes < MAXP);
#endif
#endif
          if
          :: inTurn || pass ->
             granted = true;
             held = held + need;
             if :: held > LIMIT -> printf("P-LIMIT violated: %d held, limit %d\n", held, LIMIT) :: else -> skip fi;
             assert(held <= LIMIT);   /* P-LIMIT */
             if
             :: pass ->
                passes++; headPassed++;
                printf("C%d passes the line (%d)\n", id, headPassed);
                if :: headPassed > MAXP -> printf("P-PASS violated: first in line passed %d times\n", headPassed) :: else -> skip fi;
                assert(headPassed <= MAXP)   /* P-PASS */
             :: else ->
#ifdef RESET_ANY_IN_TURN
                if :: !FAIR(id) -> passes = 0 :: else -> skip fi;
#else
                if :: !FAIR(id) && ahead == 0 -> passes = 0 :: else -> skip fi;
#endif
                printf("C%d in turn (ahead %d)\n", id, ahead)
             fi;
             if :: queued && ahead == 0 -> headPassed = 0 :: else -> skip fi;
             /* leave the line */
             if
             :: queued ->
                i = ahead;
                do
                :: i + 1 < qlen -> line[i] = line[i + 1]; i++
                :: else -> break
                od;
                qlen--; line[qlen] = 0; queued = false
             :: else -> skip
             fi;
             if :: qlen == 0 -> headPassed = 0 :: else -> skip fi
          :: else ->
             /* refused: acquire joins the line (ZADD NX), a second look keeps its place */
             if :: !queued -> line[qlen] = id + 1; qlen++; queued = true :: else -> skip fi
          fi;
          i = 0
        }
     :: granted -> break
     od;
     if
     :: granted -> d_step { held = held - need; printf("C%d releases\n", id) }
     :: else -> skip
     fi
  :: r >= ROUNDS -> break
  od
}

init {
  byte c;
  atomic {
    c = 0;
    do
    :: c < NCLIENTS -> run Client(c); c++
    :: else -> break
    od
  }
}
