// A benchmark worker process: `node --import tsx bench/worker.ts`, forked by bench/run.ts with an
// IPC channel. It runs one task at a time for the coordinator and answers with plain JSON; the
// tasks themselves are in the *-tasks.ts files, one per kind of scenario.
import { contendTask, type ContendTask } from './contend-tasks.js'
import { costTask, type CostTask } from './cost-tasks.js'
import { latencyTask, type LatencyTask } from './latency-tasks.js'
import { renewTask, type RenewTask } from './renew-tasks.js'
import { rwRun, transferRun, type RwTask, type TransferTask } from './transfer-tasks.js'
import { installWireCounter } from './wire.js'
import { workOpen, workRun, type WorkTask } from './work-tasks.js'

export type { Sections, SemaphoreTarget } from './contend-tasks.js'

installWireCounter()

export type Task = LatencyTask | ContendTask | TransferTask | RwTask | CostTask | RenewTask | WorkTask | { type: 'ready' } | { type: 'exit' }

interface Request {
  id: number
  task: Task
}

async function handle(task: Task): Promise<unknown> {
  switch (task.type) {
    case 'floor':
    case 'latency':
    case 'throughput':
    case 'memory':
      return latencyTask(task)
    case 'contend-open':
    case 'contend-warm':
    case 'contend-run':
    case 'idle-start':
    case 'idle-snapshot':
    case 'idle-finish':
      return contendTask(task)
    case 'transfer-run':
      return transferRun(task)
    case 'rw-run':
      return rwRun(task)
    case 'floor-listen':
    case 'floor-publish':
    case 'floor-collect':
    case 'ring-join':
    case 'ring-start':
    case 'ring-collect':
    case 'keyspace-open':
    case 'keyspace-run':
    case 'touch':
      return costTask(task)
    case 'renew-start':
    case 'renew-hold':
    case 'renew-finish':
      return renewTask(task)
    case 'work-open':
      return workOpen(task)
    case 'work-run':
      return workRun(task)
    case 'ready':
      return {}
    case 'exit':
      setImmediate(() => process.exit(0))
      return {}
  }
}

if (!process.send) {
  console.error('bench/worker.ts is started by bench/run.ts (npm run bench), with an IPC channel')
  process.exit(2)
}
process.on('message', (message: Request) => {
  handle(message.task).then(
    (result) => process.send?.({ id: message.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: message.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
  )
})
// The coordinator went away (crash, Ctrl-C): never linger.
process.on('disconnect', () => process.exit(0))
