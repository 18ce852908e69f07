/*
 * quorum.pml: the quorum mutex over N independent Redis masters (N = 3; 4 for the majority
 * variant), with validity, undo, fence write-back and the restart rule, model-checked with SPIN.
 *
 * Mirrors
 *   src/topology/quorum.ts (attempt: majority of counting grants, fence = max over the granting
 *     nodes, write-back to them before the lease exists, undo on every node on failure; release
 *     on every node), src/quorum/node.ts (a node counts only once up for maxTtl),
 *   src/scripts/quorum-acquire.lua (grant, nextFence, `young` from the server's uptime),
 *   src/scripts/quorum-commit.lua (write-back only while this token holds the lock there),
 *   src/scripts/mutex-release.lua (undo and release compare the token),
 *   src/operations.ts (one attempt: start before the first request; validity = ttl - elapsed -
 *     drift; a reply past it is given up), src/lease-state.ts (deadline = start + ttl - drift),
 *   src/scripts/fence-claim.lua, src/scripts/fenced-set.lua (the protected resource).
 *
 * Abstractions (what is and is not modelled)
 *   - Discrete time, one global tick. Node clocks tick with it (expiry by the node's own clock,
 *     uptime by the node's own clock); a client's monotonic clock may lose up to DRIFT ticks
 *     (drift between a client and a node is what matters to expiry; a node clock that runs slow
 *     only keeps a key longer). Drift margin = DRIFT.
 *   - The acquire runs on every node in one step (with -DPER_NODE, one step per node, so that
 *     time and the other client can come between two nodes: --full); each node's request may be
 *     lost, or its reply (a timeout); any delay between steps is an interleaving. The client
 *     sends to the nodes in index order (other clients interleave freely). Deciding on a majority
 *     before the last reply is covered: a reply not waited for is a lost reply whose grant stays
 *     until the release.
 *   - The write-back runs on the granting nodes in one step, whose reply creates the lease (or
 *     not): keys that expired before it are refused, but a key expiring between two nodes'
 *     write-backs is not explored separately. A write-back is not lost (a lost one can only fail
 *     the attempt, which leaves higher fences behind).
 *   - The undo and the release follow the acquire on the same connection, so they run after it;
 *     they reach every node in one step and are not lost (a lost one only keeps a key until it
 *     expires: fewer grants, never more).
 *   - A node may restart empty (RESTARTS times in all): lock and fence keys gone, uptime 0; it
 *     counts again once up for MAXTTL (= TTL: every ttl <= maxTtl). With -DRESTART_NODES=2 only
 *     nodes 0 and 1 restart (node 2 is node 1's twin but for the order of requests). The run_id
 *     check of node.ts is not modelled (a second, clock-independent detector of the same event).
 *   - Server TIME as a fence floor: one value per cluster lifetime, (restarts + 1) * SCALE plus a
 *     per-node offset (node 0's clock is ahead by OFF): after any restart every node's TIME is
 *     above every fence handed out before (assumption A4; SCALE exceeds the fences a run hands
 *     out), and node 0 hands out larger fences than the others, as a node with a clock ahead
 *     does (what the write-back must carry over).
 *   - Not modelled: extend (in single.pml), the fair queue and wake-ups, the per-node timeout
 *     values (a timeout is a lost reply), failover (A3: not allowed), a node clock that jumps.
 *
 * Properties (assertions)
 *   P-EXCL   never two leases valid at once as their holders' deadlines say (checked when a lease
 *            is created: validity is an interval that starts there);
 *   P-FENCE  each lease's fence is larger than the fence of every lease created before it;
 *   P-LOST, P-ORDER  as in single.pml, for the fenced resource.
 *
 * Broken variants (each removes one rule; SPIN must find a counterexample)
 *   -DNO_WRITEBACK       the lease is created without writing its fence back to the majority
 *   -DNO_RESTART_EXCL    a node counts at once after a restart
 *   -DCOUNTER_FENCE      fence = last + 1, without the server-time floor
 *   -DNO_RELEASE_TOKEN   release and undo delete the key whatever token holds it (-DROUNDS=2)
 *   -DFROM_REPLY         validity counted from the last reply instead of from before sending
 *   -DNO_DRIFT           no drift margin
 *   -DMAJ_CEIL           majority = ceil(N/2) (wrong for even N: run with -DN=4)
 */

#ifndef N
#define N 3
#endif
#ifdef MAJ_CEIL
#define MAJ ((N + 1) / 2)
#else
#define MAJ (N / 2 + 1)
#endif
#ifndef NCLIENTS
#define NCLIENTS 2
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef MAXT
#define MAXT 3
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif
#ifndef RESTART_NODES
#define RESTART_NODES N   /* the nodes that may restart: 0 .. RESTART_NODES - 1 */
#endif
#ifndef TTL
#define TTL 2
#endif
#define MAXTTL TTL
#ifndef DRIFT
#define DRIFT 1
#endif
#define SCALE 16
#define OFF 4
#define FLOOR(j) ((restarts + 1) * SCALE + (j == 0 -> OFF : 0))

byte now;
byte lag[NCLIENTS];
#define LC(i) (now - lag[i])

/* the nodes */
byte ntok[N];
byte nexp[N];
short nfence[N];
bool young[N];            /* restarted: counts only once up for MAXTTL */
byte upAt[N];
byte restarts;
#define LIVE(j) (ntok[j] != 0 && now < nexp[j])
#define COUNTS(j) (!young[j] || now - upAt[j] >= MAXTTL)

/* the fenced resource */
short guard;
byte version;
byte maxSeq;

/* bookkeeping */
bool holding[NCLIENTS];
byte deadline[NCLIENTS];
short lastLeaseFence;
byte leases;
byte ci;

inline tick() {
  now++;
  ci = 0;
  do
  :: ci < N -> if :: young[ci] && now - upAt[ci] >= MAXTTL -> young[ci] = false :: else -> skip fi; ci++
  :: else -> break
  od;
  ci = 0
}

active proctype Time() {
  byte x;
  do
  :: now < MAXT -> d_step { tick() }
  :: now < MAXT -> atomic {
       /* a tick on which client x's clock stands still (it runs slow) */
       x = 0;
       do
       :: x < NCLIENTS - 1 -> x++
       :: lag[x] < DRIFT -> d_step { tick(); lag[x]++; x = 0 }; break
       :: else -> x = 0; break
       od
     }
  :: now < MAXT && restarts < RESTARTS -> atomic {
       x = 0;
       do
       :: x < RESTART_NODES - 1 -> x++
       :: break
       od;
       d_step {
         restarts++;
         ntok[x] = 0; nexp[x] = 0; nfence[x] = 0; young[x] = true; upAt[x] = now;
         printf("t=%d NODE%d restarts empty\n", now, x);
         x = 0
       }
     }
  :: now >= MAXT -> break
  od
}

inline nextFence(j, f) {
#ifdef COUNTER_FENCE
  f = nfence[j] + 1;
#else
  if
  :: nfence[j] + 1 > FLOOR(j) -> f = nfence[j] + 1
  :: else -> f = FLOOR(j)
  fi;
#endif
  nfence[j] = f
}

/* mutex-release.lua on node j (undo and release) */
inline releaseOn(j) {
#ifdef NO_RELEASE_TOKEN
  if :: LIVE(j) && ntok[j] != tok -> printf("t=%d C%d release on NODE%d: deletes token %d's lock\n", now, id, j, ntok[j]) :: else -> skip fi;
  ntok[j] = 0
#else
  if :: LIVE(j) && ntok[j] == tok -> ntok[j] = 0 :: else -> skip fi
#endif
}

proctype Client(byte id) {
  byte r, j, start, tok, seq, rv, granted, counted, ok;
  short f, F;
  bool won;
  do
  :: r < ROUNDS ->
     r++;
     tok = id * ROUNDS + r;
     d_step { start = LC(id); printf("t=%d C%d attempt (token %d) starts at local %d\n", now, id, tok, start) }
     /* quorum-acquire.lua on each node: lost, run with the reply lost, or run and answered. Without -DPER_NODE the requests to all
        the nodes run in one step (the bounded run); with it, each node is a step of its own. */
#ifndef PER_NODE
     atomic {
#endif
     j = 0;
     do
     :: j < N ->
        if
        :: d_step { printf("t=%d C%d acquire to NODE%d lost\n", now, id, j); j++ }
        :: d_step {
             if
             :: !LIVE(j) ->
                ntok[j] = tok; nexp[j] = now + TTL; nextFence(j, f);
                printf("t=%d C%d NODE%d grants (reply lost) fence %d, expires t=%d\n", now, id, j, f, nexp[j])
             :: else -> skip
             fi;
             f = 0; j++
           }
        :: d_step {
             if
             :: !LIVE(j) ->
                ntok[j] = tok; nexp[j] = now + TTL; nextFence(j, f);
                granted = granted | (1 << j);
                if :: f > F -> F = f :: else -> skip fi;
#ifdef NO_RESTART_EXCL
                counted++;
#else
                if :: COUNTS(j) -> counted++ :: else -> skip fi;
#endif
                printf("t=%d C%d NODE%d grants fence %d, expires t=%d, counts %d\n", now, id, j, f, nexp[j], COUNTS(j))
             :: else -> printf("t=%d C%d NODE%d refuses: held by token %d\n", now, id, j, ntok[j])
             fi;
             f = 0; j++
           }
        fi
     :: else -> break
     od;
#ifndef PER_NODE
     }
#endif
     skip;
     /* quorum-commit.lua on each node that granted: the fence is written back where this token
        still holds the lock (one step for all the nodes; its reply is when the lease is made) */
     d_step {
       j = 0;
       do
       :: counted >= MAJ && j < N ->
          if
          :: (granted & (1 << j)) && LIVE(j) && ntok[j] == tok ->
#ifndef NO_WRITEBACK
             if :: F > nfence[j] -> nfence[j] = F :: else -> skip fi;
#endif
             ok++
          :: else -> skip
          fi;
          j++
       :: else -> break
       od;
#ifdef NO_WRITEBACK
       if :: counted >= MAJ -> printf("t=%d C%d fence %d NOT written back (lock still held on %d nodes)\n", now, id, F, ok) :: else -> skip fi;
#else
       if :: counted >= MAJ -> printf("t=%d C%d write-back of fence %d done on %d nodes\n", now, id, F, ok) :: else -> skip fi;
#endif
       j = 0;
       won = false;
       if
#ifdef FROM_REPLY
       :: counted >= MAJ && ok >= MAJ ->
          deadline[id] = LC(id) + TTL - DRIFT;
#elif defined(NO_DRIFT)
       :: counted >= MAJ && ok >= MAJ && LC(id) - start < TTL ->
          deadline[id] = start + TTL;
#else
       :: counted >= MAJ && ok >= MAJ && LC(id) - start < TTL - DRIFT ->
          deadline[id] = start + TTL - DRIFT;
#endif
          won = true; holding[id] = true;
          leases++; seq = leases;
          printf("t=%d C%d LEASE #%d fence %d, deadline local %d (local clock %d)\n", now, id, seq, F, deadline[id], LC(id));
          ci = 0;
          do
          :: ci < NCLIENTS ->
             if
             :: ci != id && holding[ci] && LC(ci) < deadline[ci] ->
                printf("t=%d P-EXCL violated: C%d and C%d both hold valid leases\n", now, id, ci)
             :: else -> skip
             fi;
             assert(ci == id || !holding[ci] || LC(ci) >= deadline[ci]);   /* P-EXCL */
             ci++
          :: else -> break
          od;
          ci = 0;
          if :: F <= lastLeaseFence -> printf("t=%d P-FENCE violated: fence %d after fence %d\n", now, F, lastLeaseFence) :: else -> skip fi;
          assert(F > lastLeaseFence);   /* P-FENCE */
          lastLeaseFence = F
       :: else ->
          printf("t=%d C%d attempt fails (counted %d, written back %d, local %d, start %d): undo\n", now, id, counted, ok, LC(id), start)
       fi
     }
     if
     :: won ->
        /* claim and read, then the fenced write (see single.pml) */
        d_step {
          if
          :: F >= guard -> guard = F; rv = version; ok = 1; printf("t=%d C%d claims fence %d, reads version %d\n", now, id, F, rv)
          :: else -> ok = 0; printf("t=%d C%d claim fence %d refused (guard %d)\n", now, id, F, guard)
          fi
        }
        if
        :: ok ->
           d_step {
             if
             :: F >= guard ->
                printf("t=%d C%d write fence %d: accepted\n", now, id, F);
                assert(rv == version);   /* P-LOST */
                assert(seq >= maxSeq);   /* P-ORDER */
                guard = F; version++; maxSeq = seq
             :: else -> printf("t=%d C%d write fence %d refused (guard %d)\n", now, id, F, guard)
             fi;
             rv = 0
           }
        :: else -> skip
        fi
     :: else -> skip
     fi;
     skip;
     /* release (or undo) on every node, in one step: a lost or late release only keeps a key
        until its expiry, which never lets more clients in */
     d_step {
       j = 0;
       do
       :: j < N -> releaseOn(j); j++
       :: else -> break
       od;
       if :: won -> printf("t=%d C%d released\n", now, id) :: else -> skip fi;
       holding[id] = false; won = false;
       j = 0; start = 0; seq = 0; granted = 0; counted = 0; ok = 0; F = 0
     }
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
