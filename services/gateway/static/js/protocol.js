// @ts-check
// The WebSocket protocol's messages (docs/protocol.md) as JSDoc types, written once:
// what the server sends (`ServerMessage`, the `view` being `TableView`) and what the
// page sends (`ClientMessage`). Types only: no module imports this file at run time.

/**
 * The rules of a table, every option filled in (docs/rules.md).
 * @typedef {object} Rules
 * @property {number} players
 * @property {number} target
 * @property {boolean} bonus
 * @property {boolean} partners
 * @property {number} run_to_go_out
 * @property {boolean} descending
 * @property {boolean} repair_token
 * @property {boolean} visible_center
 * @property {boolean} reshuffle_on_recycle
 * @property {number} max_recycles
 * @property {number} turn_cap
 * @property {string} tiebreak
 */

/**
 * A move: draw from a pile, place or throw the card held, or repair (swap `slot` and `slot + 1`).
 * @typedef {object} Move
 * @property {"draw" | "place" | "throw" | "repair"} act
 * @property {"stock" | "discard"} [from]
 * @property {number} [slot]
 * @property {boolean} [go_out] false: stay in with a winning rack (the bonus rule)
 */

/**
 * A seat of the table, as every view lists it.
 * @typedef {object} Seat
 * @property {number} seat
 * @property {string} name
 * @property {"human" | "bot" | "cover" | string} kind
 * @property {boolean} [connected]
 * @property {string} [level]
 * @property {boolean} [left]
 */

/**
 * A finished round: who went out (null: nobody) and each seat's points.
 * @typedef {{ winner: number | null, points: number[] }} Round
 */

/**
 * The match as one seat (or a spectator) sees it (rackcore's `View.to_dict()`).
 * @typedef {object} View
 * @property {number} seat this page's seat, -1 when watching
 * @property {number} turn
 * @property {"draw" | "resolve" | "round_over" | "match_over" | string} phase
 * @property {number} round_no
 * @property {Rules} rules
 * @property {number[]} rack
 * @property {number[]} discard
 * @property {number[]} scores
 * @property {Round[]} rounds
 * @property {number | null} winner a seat, or a team (seat % 2) with partners
 * @property {number | null} [held]
 * @property {"stock" | "discard" | null} [held_from]
 * @property {string} [commitment]
 * @property {string | null} [seed] revealed at the match's end
 * @property {number} stock_count
 * @property {number[] | null} [stock_known] the stock's order, when everyone saw it form
 * @property {number} [recycles]
 * @property {boolean[]} repair_tokens
 * @property {(number | null)[] | null} [center] each seat's visible centre card
 * @property {(number | null)[] | null} [last_pickup]
 * @property {(number | null)[][] | null} [known] each seat's rack as the others saw it (null: unseen)
 * @property {number[][] | null} [discarded] each seat's discards this round
 * @property {number[][] | null} [racks] every rack, once revealed
 */

/**
 * The move that made a view: whose, what, and who decided it.
 * @typedef {{ seat: number, act: string, from?: string, slot?: number, by?: string }} LastMove
 */

/**
 * The server's `view` message: the table as this connection may see it.
 * @typedef {object} TableView
 * @property {"view"} [type]
 * @property {string} table_id
 * @property {number} version
 * @property {"playing" | "round_over" | "finished" | "ended" | string} status
 * @property {View} view
 * @property {Seat[]} seats
 * @property {string} [code]
 * @property {number} [deadline_ms] the decision clock's end (0 or absent: no clock)
 * @property {number} remaining_ms that clock's time left when sent
 * @property {number} [continue_deadline_ms] round over: when the next round starts anyway
 * @property {boolean[]} [continued] who pressed Continue after the round
 * @property {number} [watchers]
 * @property {string} [ended_reason]
 * @property {Move[]} [legal] this seat's legal moves now
 * @property {LastMove | null} [last_move]
 */

/**
 * A seat of a waiting room.
 * @typedef {{ seat: number, name: string, taken: boolean, bot: boolean }} LobbySeat
 */

/**
 * The server's `lobby` message: a table's waiting room (`you` -1 for a spectator).
 * @typedef {object} Lobby
 * @property {"lobby"} type
 * @property {string} code
 * @property {string} table_id
 * @property {Rules} rules
 * @property {LobbySeat[]} seats
 * @property {number} creator_seat -1 for quick match
 * @property {number} you
 * @property {"waiting" | "started" | "closed"} status
 * @property {number} fill_deadline_ms unix ms, 0 for none
 * @property {boolean} public
 * @property {string} level
 * @property {"off" | "public"} spectators
 */

/**
 * The server's `rematch_offer`: another player of this page's finished match asked for a rematch.
 * @typedef {object} RematchOffer
 * @property {"rematch_offer"} type
 * @property {string} table_id
 * @property {string} code
 * @property {"waiting" | "started" | "closed"} status
 * @property {{ seat: number, name: string, bot: boolean, answered: boolean }[]} seats
 * @property {number} deadline_ms unix ms when it starts anyway
 */

/** @typedef {{ type: "welcome", version: number, server: string }} Welcome */
/** @typedef {{ type: "seated", token: string, seat: number, code: string, table_id: string }} Seated */
/** @typedef {{ type: "watching", table_id: string, code: string }} Watching */
/** @typedef {{ type: "moved", id: string, version: number }} Moved */
/** @typedef {{ type: "left" }} Left */
/** @typedef {{ type: "pong", t?: number }} Pong */
/** @typedef {{ type: "error", code: string, message: string, id?: string }} ErrorMessage */
/**
 * The answer to `hint`: the move the computer would make now (from the view of `version`), as the page would send it.
 * @typedef {{ type: "hint", id: string, version?: number, move: Move }} Hint
 */

/**
 * A profile's rating as players see it (`round(60 * mu)`; provisional while its uncertainty is high).
 * @typedef {{ value: number, provisional: boolean }} Rating
 */

/**
 * A profile's record, in all and per player count (`by_players`, keyed "2", "3", "4").
 * @typedef {object} StatLine
 * @property {number} played
 * @property {number} won
 * @property {number} rounds_won
 * @property {number | null} mean_own_turns_to_go_out
 * @property {number} best_bonus_run
 */
/** @typedef {StatLine & { by_players?: Record<string, StatLine> }} Stats */

/**
 * The server's `profile`: the profile bound to this connection (`key` only when it is new to this device).
 * @typedef {object} ProfileMessage
 * @property {"profile"} type
 * @property {string} id
 * @property {string} [key]
 * @property {string} name
 * @property {boolean} public
 * @property {Rating} rating
 * @property {Stats} stats
 */

/**
 * One finished match of a profile's history (`replay` null once its record is gone).
 * @typedef {object} HistoryMatch
 * @property {string} table_id
 * @property {number} finished_ms
 * @property {{ seat: number, name: string, score: number, bot: boolean }[]} players
 * @property {number} seat
 * @property {number} score
 * @property {number} place
 * @property {boolean} rated
 * @property {number | null} rating_before
 * @property {number | null} rating_after
 * @property {string | null} replay
 */

/** @typedef {{ type: "history", matches: HistoryMatch[] }} HistoryMessage */
/** @typedef {{ place: number, name: string, rating: number }} LeaderboardEntry */
/** @typedef {{ type: "leaderboard", entries: LeaderboardEntry[] }} LeaderboardMessage */
/** @typedef {{ type: "link_code", code: string, expires_ms: number }} LinkCode */
/** @typedef {{ type: "forgotten" }} Forgotten */

/**
 * A profile's Daily Rack entry of a day (`table_id` "" until its match finished).
 * @typedef {object} DailyEntry
 * @property {string} [day]
 * @property {string} [name]
 * @property {string} [table_id]
 * @property {boolean} [finished]
 * @property {number} score
 * @property {number} own_turns
 * @property {boolean} [won]
 */

/**
 * The server's `daily`: today's Daily Rack (its commitment, when it closes), the day
 * before's seed, this profile's entry (`you`) and the day's board.
 * @typedef {object} DailyMessage
 * @property {"daily"} type
 * @property {string} day
 * @property {string} commitment
 * @property {number} closes_ms
 * @property {{ day: string, seed: string, commitment: string } | null} [previous]
 * @property {DailyEntry | null} [you]
 * @property {{ place: number, name: string, score: number, own_turns: number, table_id?: string }[]} board
 */

/**
 * Every message the server sends.
 * @typedef {Welcome | Seated | Watching | RematchOffer | Lobby | (TableView & { type: "view" }) | Moved | Left | Pong | Hint
 *   | ProfileMessage | HistoryMessage | LeaderboardMessage | LinkCode | Forgotten | DailyMessage | ErrorMessage} ServerMessage
 */

/**
 * Every message the page sends (`hello` is js/net.js's).
 * @typedef {{ type: "hello", version: number, client?: string }
 *   | { type: "quick_match", name: string, players: number }
 *   | { type: "create_table", name: string, rules?: Partial<Rules>, level?: string, start_now?: boolean, spectators?: "off" | "public" }
 *   | { type: "join", code: string, name: string }
 *   | { type: "start" }
 *   | { type: "move", move: Move, id: string, version?: number }
 *   | { type: "hint", id: string, version?: number }
 *   | { type: "continue" }
 *   | { type: "leave" }
 *   | { type: "rematch" }
 *   | { type: "watch", code: string }
 *   | { type: "resume", token: string }
 *   | { type: "ping", t?: number }
 *   | { type: "profile", key?: string, link?: string, name?: string, public?: boolean }
 *   | { type: "link_code" }
 *   | { type: "forget_profile" }
 *   | { type: "history" }
 *   | { type: "leaderboard" }
 *   | { type: "daily" }
 *   | { type: "play_daily" }} ClientMessage
 */

export {};
