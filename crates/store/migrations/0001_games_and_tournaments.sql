-- Finished games: the record as JSON, plus what lists filter and sort on.
-- `seq` orders the lists (newest first) and is the paging cursor; `id` is
-- the random public id. `{serial_key}` is the one phrase the backends spell
-- differently: an auto-numbered 64-bit primary key (see src/migrations.rs).
CREATE TABLE games (
    seq {serial_key},
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    rule TEXT NOT NULL,
    players TEXT NOT NULL,
    result TEXT NOT NULL,
    reason TEXT NOT NULL,
    ended_unix_ms BIGINT NOT NULL,
    tournament TEXT,
    record TEXT NOT NULL
);
CREATE INDEX games_by_kind ON games (kind, seq);
CREATE INDEX games_by_tournament ON games (tournament, seq);

-- One row per seat, for "games of this player".
CREATE TABLE game_players (
    game_seq BIGINT NOT NULL REFERENCES games (seq),
    seat BIGINT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (game_seq, seat)
);
CREATE INDEX game_players_by_name ON game_players (name, game_seq);

CREATE TABLE tournaments (
    id TEXT PRIMARY KEY,
    created_unix_ms BIGINT NOT NULL,
    settings TEXT NOT NULL
);

-- The games of a tournament: status is 'pending', 'claimed' (worker and
-- claimed_unix_ms set) or 'done' (result and game_id set). `attempt` counts
-- claims, so a worker whose claim was released cannot finish the game.
CREATE TABLE tournament_games (
    tournament TEXT NOT NULL REFERENCES tournaments (id),
    idx BIGINT NOT NULL,
    pairing TEXT NOT NULL,
    opening TEXT NOT NULL,
    status TEXT NOT NULL,
    worker TEXT,
    claimed_unix_ms BIGINT,
    attempt BIGINT NOT NULL DEFAULT 0,
    result TEXT,
    game_id TEXT,
    PRIMARY KEY (tournament, idx)
);
CREATE INDEX tournament_games_by_status ON tournament_games (tournament, status, idx);
