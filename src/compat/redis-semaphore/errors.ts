// redis-semaphore's error classes, as its users catch them (plain Error subclasses).

/** The lock was lost between refreshes (expired, or taken by another holder). */
export class LostLockError extends Error {}

/** `acquire()` gave up: acquireTimeout passed or acquireAttemptsLimit attempts were refused. */
export class TimeoutError extends Error {}
