/*
 * single.pml: the single-node mutex, its fence, and a fenced resource, model-checked with SPIN.
 *
 * Mirrors
 *   src/scripts/mutex-acquire.lua, src/scripts/lib/queue.lua (nextFence: fence = max(last + 1,
 *     server TIME)), src/scripts/mutex-extend.lua, src/scripts/mutex-release.lua;
 *   src/operations.ts (one attempt: start taken before the request, a reply later than ttl -
 *     drift is given up and released), src/lease-state.ts (deadline = start + ttl - drift(ttl),
 *     extend counts the new deadline from before its request);
 *   src/scripts/fence-claim.lua and src/scripts/fenced-set.lua (claim, read, fenced write).
 *
 * Abstractions (what is and is not modelled)
 *   - Time is discrete: one tick of the Redis clock `now`. Redis expires a key when `now` reaches
 *     its expiry. A client's monotonic clock is `now - lag[i]`: it may run slow by up to DRIFT
 *     ticks in all (assumption A1 of docs/evidence/safety.md); a clock that runs fast is safe and left out.
 *     The drift margin subtracted from every deadline is DRIFT.
 *   - Every Redis script is one atomic step (Redis runs scripts one at a time). Between two steps
 *     of a client anything may happen: other clients, ticks, a restart. That is how request and
 *     reply delays and process pauses (GC, SIGSTOP: the clock keeps running) are modelled.
 *   - A client may be suspended (SUSPENDS times; 0 in the bounded run, 1 with --full): it takes
 *     no step and its clock stops while Redis's runs on (a VM or laptop suspend stops
 *     CLOCK_MONOTONIC). Such a holder's deadline means nothing (P-HELD leaves it out), and the
 *     fence properties never read a client's clock: a suspended holder acts on Redis and the
 *     resource as a paused one does, which is why the bounded run can leave suspension out.
 *   - Redis may restart empty (RESTARTS times): the lock key and the fence key are gone, and the
 *     restart takes at least one tick. The TIME floor of the fence is abstracted to one value per
 *     server lifetime, (restarts + 1) * SCALE with SCALE above the number of acquisitions in a
 *     run: TIME in microseconds after a restart is above every fence handed out before it (fences
 *     grow by 1 per acquisition, far slower than TIME); nothing else about its value matters here.
 *   - The client takes every step whatever its clock says (it does not look at lease.held before
 *     writing): the resource, not the client's belief, must refuse a stale writer.
 *   - Not modelled: the fair queue and wake-ups (liveness only; safety never depends on them),
 *     key retention of the fence key (7 days), retries with the same token, WAIT and replicas,
 *     Redis Cluster. A lost request is the same as a pause here; a lost reply is not modelled
 *     separately (the client then never uses that lease; its key expires).
 *
 * Properties (assertions)
 *   P-FENCE  fences strictly increase per resource, in the order Redis hands them out;
 *   P-LOST   the resource never accepts a write that read a value another accepted write has
 *            replaced since (no lost update in a read-modify-write);
 *   P-ORDER  the resource never accepts a write from a lease older than one it accepted;
 *   P-HELD   a lease whose deadline (on its holder's clock) has not passed is held in Redis,
 *            unless its holder was suspended or Redis restarted since it was granted.
 *
 * -DEXTEND: each lease may also be extended once (mutex-extend.lua); off in the bounded run.
 *
 * Broken variants (each removes one rule; SPIN must find a counterexample)
 *   -DNO_RELEASE_TOKEN  release deletes the key without comparing the token
 *   -DNO_EXTEND_TOKEN   extend pushes the expiry without comparing the token (with -DEXTEND)
 *   -DCOUNTER_FENCE     fence = last + 1, without the server-time floor
 *   -DNO_PLUS_ONE      fence = max(last, TIME): the +1 dropped
 *   -DFROM_REPLY        validity counted from the reply instead of from before sending
 *   -DNO_DRIFT          no drift margin: deadline = start + ttl
 *   -DNO_CLAIM          write guard only, no claim before the read
 */

#ifndef NCLIENTS
#define NCLIENTS 2
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef MAXT
#define MAXT 5
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif
#ifndef SUSPENDS
#define SUSPENDS 0
#endif
#ifndef TTL
#define TTL 3
#endif
#define DRIFT 1
#define SCALE 8
/* The server's TIME in microseconds, as far as fences can tell: above every fence handed out
   before the last restart (a restart takes longer than the microseconds that fences advanced
   by one per acquisition), and otherwise irrelevant; so one value per server lifetime. */
#define FLOOR ((restarts + 1) * SCALE)

byte now;                 /* Redis server clock, ticks */
byte lag[NCLIENTS];       /* client i's monotonic clock is now - lag[i] */
#define LC(i) (now - lag[i])

/* Redis: the lock key and the fence key of one resource */
byte lockTok;             /* 0: no key */
byte expireAt;            /* the key exists while now < expireAt */
short lastFence;          /* 0: no fence key */
byte restarts;
byte suspends;

/* the fenced resource: guard key, value version */
short guard;
byte version;
byte maxSeq;              /* grant order of the newest lease whose write was accepted */

/* bookkeeping for the properties */
short maxFence;
byte grants;
bool holding[NCLIENTS];
byte deadline[NCLIENTS];
byte myTok[NCLIENTS];
bool susp[NCLIENTS];
bool wasSusp[NCLIENTS];
bool restarted[NCLIENTS];
byte ci;                  /* scratch, always 0 between steps */

#define KEY_LIVE (lockTok != 0 && now < expireAt)

/* P-HELD, checked after every step that can end a key or move a clock */
inline checkHeld() {
  ci = 0;
  do
  :: ci < NCLIENTS ->
     if
     :: holding[ci] && !wasSusp[ci] && !restarted[ci] && LC(ci) < deadline[ci] ->
        if
        :: !(KEY_LIVE && lockTok == myTok[ci]) ->
           printf("t=%d P-HELD violated: C%d's deadline (local %d) has not passed, but Redis holds token %d (live %d)\n", now, ci, deadline[ci], lockTok, KEY_LIVE)
        :: else -> skip
        fi;
        assert(KEY_LIVE && lockTok == myTok[ci])   /* P-HELD */
     :: else -> skip
     fi;
     ci++
  :: else -> break
  od;
  ci = 0
}

/* One tick of real time. A clock may lose one tick (up to DRIFT in all); a suspended client's
   clock stands still. */
inline advance() {
  now++;
  ci = 0;
  do
  :: ci < NCLIENTS -> if :: susp[ci] -> lag[ci]++ :: else -> skip fi; ci++
  :: else -> break
  od;
  ci = 0
}

active proctype Time() {
  byte x;
  do
  :: now < MAXT -> d_step { advance(); checkHeld() }
  :: now < MAXT -> atomic {
       /* a slow tick for client x */
       /* a tick on which client x's clock stands still (it runs slow) */
       x = 0;
       do
       :: x < NCLIENTS - 1 -> x++
       :: lag[x] < DRIFT && !susp[x] -> d_step { advance(); lag[x]++; x = 0;
         checkHeld() }; break
       :: else -> x = 0; break
       od
     }
  :: now < MAXT && restarts < RESTARTS -> d_step {
       restarts++;
       advance();
       printf("t=%d REDIS restarts empty (lock and fence keys gone)\n", now);
       lockTok = 0; expireAt = 0; lastFence = 0;
       x = 0;
       do
       :: x < NCLIENTS -> restarted[x] = true; x++
       :: else -> break
       od;
       x = 0
     }
  :: now >= MAXT -> break
  od
}

/* mutex-acquire.lua + nextFence */
inline nextFence(f) {
#ifdef COUNTER_FENCE
  f = lastFence + 1;
#elif defined(NO_PLUS_ONE)
  if
  :: lastFence > FLOOR -> f = lastFence
  :: else -> f = FLOOR
  fi;
#else
  if
  :: lastFence + 1 > FLOOR -> f = lastFence + 1
  :: else -> f = FLOOR
  fi;
#endif
  lastFence = f
}

proctype Client(byte id) {
  byte r, start, tok, seq, rv;
  short fence;
  bool granted, ok;
  do
  :: r < ROUNDS ->
     r++;
     tok = id * ROUNDS + r;
     d_step { start = LC(id); wasSusp[id] = susp[id] }
     d_step {
       !susp[id];
       if
       :: lockTok != 0 && now >= expireAt -> lockTok = 0
       :: else -> skip
       fi;
       if
       :: lockTok == 0 ->
          lockTok = tok; expireAt = now + TTL; restarted[id] = false;
          nextFence(fence);
          grants++; seq = grants;
          printf("t=%d C%d acquire: granted token %d fence %d, key expires at t=%d (sent at local %d)\n", now, id, tok, fence, expireAt, start);
          if :: fence <= maxFence -> printf("t=%d P-FENCE violated: fence %d after fence %d\n", now, fence, maxFence) :: else -> skip fi;
          assert(fence > maxFence);   /* P-FENCE */
          maxFence = fence;
          granted = true
       :: else ->
          printf("t=%d C%d acquire: held by token %d\n", now, id, lockTok);
          granted = false
       fi
     }
     if
     :: !granted -> goto next
     :: else -> skip
     fi;
     /* the reply arrives */
     d_step {
       !susp[id];
#ifdef FROM_REPLY
       if :: true ->
#else
       if
       :: LC(id) - start < TTL - DRIFT ->
#endif
          holding[id] = true; myTok[id] = tok;
#if defined(FROM_REPLY)
          deadline[id] = LC(id) + TTL - DRIFT;
#elif defined(NO_DRIFT)
          deadline[id] = start + TTL;
#else
          deadline[id] = start + TTL - DRIFT;
#endif
          printf("t=%d C%d lease fence %d, deadline local %d (local clock %d)\n", now, id, fence, deadline[id], LC(id))
       :: else ->
          printf("t=%d C%d reply too late (local %d, sent at %d): gives up\n", now, id, LC(id), start);
          granted = false
       fi;
       checkHeld()
     }
     if
     :: !granted -> goto release
     :: else -> skip
     fi;
#ifdef EXTEND
     /* optionally extend once (mutex-extend.lua), counting from before the request */
     if
     :: true ->
        start = LC(id);
        d_step {
          !susp[id];
#ifdef NO_EXTEND_TOKEN
          ok = true;
          if :: KEY_LIVE -> expireAt = now + TTL :: else -> skip fi;
#else
          ok = KEY_LIVE && lockTok == tok;
          if :: ok -> expireAt = now + TTL :: else -> skip fi;
#endif
          printf("t=%d C%d extend: %d, key expires at t=%d\n", now, id, ok, expireAt)
        }
        d_step {
          !susp[id];
          if
          :: ok && LC(id) - start < TTL - DRIFT ->
#if defined(FROM_REPLY)
             deadline[id] = LC(id) + TTL - DRIFT;
#elif defined(NO_DRIFT)
             deadline[id] = start + TTL;
#else
             deadline[id] = start + TTL - DRIFT;
#endif
             printf("t=%d C%d extended: deadline local %d\n", now, id, deadline[id])
          :: ok && LC(id) - start >= TTL - DRIFT -> holding[id] = false
          :: !ok -> holding[id] = false; printf("t=%d C%d lease lost (extend refused)\n", now, id)
          fi;
          checkHeld()
        }
     :: true -> skip
     fi;
#endif
     /* the protected read-modify-write: claim, read, fenced write */
     /* the protected read-modify-write: claim and read (one step: what happens between the two
        cannot change the outcome, the guard already holds this fence), then the fenced write */
     d_step {
       !susp[id];
#ifdef NO_CLAIM
       ok = true;
#else
       if
       :: fence >= guard -> guard = fence; ok = true
       :: else -> ok = false; printf("t=%d C%d claim fence %d: refused (guard %d)\n", now, id, fence, guard)
       fi;
#endif
       if
       :: ok -> rv = version; printf("t=%d C%d claims fence %d, reads version %d\n", now, id, fence, rv)
       :: else -> skip
       fi
     }
     if
     :: !ok -> goto release
     :: else -> skip
     fi;
     d_step {
       !susp[id];
       if
       :: fence >= guard ->
          printf("t=%d C%d write fence %d (read version %d, now %d): accepted\n", now, id, fence, rv, version);
          if :: rv != version -> printf("t=%d P-LOST violated: C%d's write of version %d replaces version %d it never read\n", now, id, rv + 1, version) :: else -> skip fi;
          if :: seq < maxSeq -> printf("t=%d P-ORDER violated: lease #%d written after lease #%d\n", now, seq, maxSeq) :: else -> skip fi;
          assert(rv == version);      /* P-LOST */
          assert(seq >= maxSeq);      /* P-ORDER */
          guard = fence; version++; maxSeq = seq
       :: else -> printf("t=%d C%d write fence %d: refused (guard %d)\n", now, id, fence, guard)
       fi;
       rv = 0
     }
release:
     skip;
     d_step {
       !susp[id];
#ifdef NO_RELEASE_TOKEN
       if :: lockTok != 0 -> printf("t=%d C%d release: deletes the key of token %d\n", now, id, lockTok) :: else -> skip fi;
       lockTok = 0;
#else
       if
       :: KEY_LIVE && lockTok == tok -> lockTok = 0; printf("t=%d C%d release: released\n", now, id)
       :: else -> printf("t=%d C%d release: not held by this token\n", now, id)
       fi;
#endif
       holding[id] = false;
       checkHeld()
     }
next:
     /* forget this round (smaller state vector) */
     start = 0; seq = 0; fence = 0; granted = false; ok = false
  :: r >= ROUNDS -> break
  od
}

/* A client may be suspended at any moment (its clock stops; it takes no step), then resumed. */
active proctype Suspender() {
  byte x;
  do
  :: suspends < SUSPENDS -> atomic {
       x = 0;
       do
       :: x < NCLIENTS - 1 -> x++
       :: break
       od;
       d_step {
         suspends++; susp[x] = true; wasSusp[x] = true;
         printf("t=%d C%d suspended (its clock stops)\n", now, x)
       }
     }
     d_step { printf("t=%d C%d resumed\n", now, x); susp[x] = false; x = 0 }
  :: else -> break
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
