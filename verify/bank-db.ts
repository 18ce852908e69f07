// The bank in PostgreSQL: one schema per run, its accounts and its ledger, read back at the end.
import pg from 'pg'
import type { BankResource } from './config.js'
import type { PgTarget } from './pg-target.js'
import type { AccountRow, LedgerRow } from './run-types.js'

export class BankDb {
  readonly #db: pg.Client

  constructor(
    target: PgTarget,
    private readonly schema: string,
  ) {
    this.#db = new pg.Client(target)
    this.#db.on('error', () => {})
  }

  async create(resources: BankResource[], initialBalance: number): Promise<void> {
    const { schema } = this
    await this.#db.connect()
    await this.#db.query(`CREATE SCHEMA ${schema}`)
    await this.#db.query(`CREATE TABLE ${schema}.accounts (id int PRIMARY KEY, bank text NOT NULL, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)`)
    // Every committed write also appends here; rows of one account are appended under that
    // account's row lock, so per account `seq` is commit order.
    await this.#db.query(
      `CREATE TABLE ${schema}.ledger (seq bigserial PRIMARY KEY, account int NOT NULL, fence bigint NOT NULL, worker text NOT NULL, balance bigint NOT NULL)`,
    )
    for (const bank of resources) {
      for (const id of bank.accounts)
        await this.#db.query(`INSERT INTO ${schema}.accounts (id, bank, balance) VALUES ($1, $2, $3)`, [id, bank.name, initialBalance])
    }
  }

  async accounts(): Promise<AccountRow[]> {
    return (
      await this.#db.query<{ id: number; balance: string; fence: string }>(`SELECT id, balance, fence FROM ${this.schema}.accounts ORDER BY id`)
    ).rows.map((r) => ({ id: r.id, balance: Number(r.balance), fence: Number(r.fence) }))
  }

  async ledger(): Promise<LedgerRow[]> {
    return (
      await this.#db.query<{ seq: string; account: number; fence: string; worker: string }>(
        `SELECT seq, account, fence, worker FROM ${this.schema}.ledger ORDER BY seq`,
      )
    ).rows.map((r) => ({ seq: Number(r.seq), account: r.account, fence: Number(r.fence), worker: r.worker }))
  }

  async drop(): Promise<void> {
    await this.#db.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`).catch(() => {})
    await this.#db.end().catch(() => {})
  }
}
