"""The Lua scripts that make each matchmaker state change atomic in Redis.

Every script runs in one *home* (``redis_keys.py``): one hash tag, so on Redis Cluster
one slot, holding the tables, quick-match queues and due set it changes; it may touch
tables of its home it finds at run time (the oldest open table). Every script gets the
home's key prefix as ARGV[1], the time (unix ms) as ARGV[2] and the change feed's
channel as ARGV[3]. What is looked up by another key — room codes, seat tokens, rematch
pointers — lives in other slots and is written by ``redis.py`` around the script
(``CODE_TTL`` keeps or frees a code). Each script mirrors one method of
``MemoryStore``; the contract tests hold them to the same behaviour.
"""

from __future__ import annotations

__all__ = [
    "CLAIM",
    "CLAIM_DUE",
    "CODE_TTL",
    "CREATE_PRIVATE",
    "FINISH",
    "JOIN",
    "LEAVE",
    "QUICK_JOIN",
    "RELEASE",
    "REMATCH",
]

_PRELUDE = """
local home = ARGV[1]
local now = tonumber(ARGV[2])
local chan = ARGV[3]
local dkey = home .. 'due'
local function tkey(id) return home .. 't:' .. id end
local function qkey(players) return home .. 'q:' .. players end
local function bump(id)
  redis.call('HINCRBY', tkey(id), 'ver', 1)
  redis.call('PUBLISH', chan, id)
end
local function free_seat(tk, players)
  for i = 0, players - 1 do
    local n = redis.call('HGET', tk, 'n' .. i)
    if not n or n == '' then return i end
  end
  return -1
end
local function reply(head, id)
  local fields = redis.call('HGETALL', tkey(id))
  for i = 1, #fields do head[#head + 1] = fields[i] end
  return head
end
local function open_table(tk, id, code, pub, players, rules, level, creator, deadline,
                          name, hash, ttl)
  redis.call('HSET', tk, 'id', id, 'code', code, 'pub', pub, 'players', players,
    'rules', rules, 'level', level, 'creator', creator, 'status', 'waiting',
    'created', now, 'deadline', deadline, 'replica', '', 'ver', 0, 'humans', 1,
    'owner', '', 'attempts', 0, 'n0', name, 'k0', hash)
  redis.call('PEXPIRE', tk, ttl)
end
local function level_of(tk, players)
  local sum, count = 0, 0
  for i = 0, players - 1 do
    local f = redis.call('HMGET', tk, 'n' .. i, 'b' .. i, 'p' .. i, 'r' .. i)
    if f[1] and f[1] ~= '' and f[2] ~= '1' and f[3] and f[3] ~= '' then
      sum = sum + (tonumber(f[4]) or 0)
      count = count + 1
    end
  end
  if count == 0 then return nil end
  return sum / count
end
local function take(id, owner, claim_ms)
  local tk = tkey(id)
  redis.call('HSET', tk, 'status', 'starting', 'owner', owner)
  redis.call('ZADD', dkey, now + claim_ms, id)
  redis.call('ZREM', qkey(redis.call('HGET', tk, 'players')), id)
end
local function close_table(id, done_ttl)
  local tk = tkey(id)
  redis.call('HSET', tk, 'status', 'closed', 'owner', '')
  redis.call('ZREM', dkey, id)
  redis.call('ZREM', qkey(redis.call('HGET', tk, 'players')), id)
  redis.call('PEXPIRE', tk, done_ttl)
  bump(id)
end
"""

# KEYS: queue, due.
# ARGV: home, now, chan, players, name, hash, fill, fill_lone, lobby_ttl, rules, level,
#       owner, claim_ms, open ("1": open a table if none has a seat), new id, new code,
#       profile (empty: none, and no rating), rating, level_window, level_widen_per_s,
#       level_open_ms.
# Seats the sitter at the oldest open table of the queue in its level's window
# (services/matchmaker/by_level.py; tables looked at: the 64 oldest). With none: opens the
# new table (its code already claimed) when asked to, else returns {}. Returns {id, seat,
# start, table fields...} (start: full, and claimed for owner).
QUICK_JOIN = (
    _PRELUDE
    + """
local players = tonumber(ARGV[4])
local name, hash = ARGV[5], ARGV[6]
local fill, fill_lone = tonumber(ARGV[7]), tonumber(ARGV[8])
local profile, rating = ARGV[17], tonumber(ARGV[18])
local base, widen, open_ms = tonumber(ARGV[19]), tonumber(ARGV[20]), tonumber(ARGV[21])
local function fits(tk, created)
  if profile == '' or open_ms <= 0 then return true end
  local level = level_of(tk, players)
  if level == nil then return true end
  local age = now - created
  if age >= open_ms then return true end
  if age < 0 then age = 0 end
  return math.abs(rating - level) <= base + widen * age / 1000
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, 63)) do
  local tk = tkey(id)
  local f = redis.call('HMGET', tk, 'status', 'humans', 'deadline', 'created')
  local seat = -1
  if f[1] == 'waiting' then seat = free_seat(tk, players) end
  if seat < 0 then
    redis.call('ZREM', KEYS[1], id)
  elseif fits(tk, tonumber(f[4])) then
    local humans = tonumber(f[2]) + 1
    local deadline = tonumber(f[3])
    if humans == 2 and now + fill < deadline then deadline = now + fill end
    redis.call('HSET', tk, 'n' .. seat, name, 'k' .. seat, hash, 'p' .. seat, profile,
      'r' .. seat, rating, 'humans', humans, 'deadline', deadline)
    local start = 0
    if free_seat(tk, players) < 0 then
      start = 1
      take(id, ARGV[12], tonumber(ARGV[13]))
    else
      redis.call('ZADD', KEYS[2], deadline, id)
    end
    bump(id)
    return reply({id, seat, start}, id)
  end
end
if ARGV[14] ~= '1' then return {} end
local id = ARGV[15]
local deadline = now + fill_lone
open_table(tkey(id), id, ARGV[16], '1', players, ARGV[10], ARGV[11], -1, deadline,
  name, hash, tonumber(ARGV[9]))
redis.call('HSET', tkey(id), 'p0', profile, 'r0', rating, 'rated', '0', 'daily', '')
redis.call('ZADD', KEYS[1], now, id)
redis.call('ZADD', KEYS[2], deadline, id)
bump(id)
return reply({id, 0, 0}, id)
"""
)

# KEYS: table, due.
# ARGV: home, now, chan, id, code, name, hash, rules, level, players, lobby_ttl,
#       start_now, owner, claim_ms, spectators ("1": open to them), profile, rating,
#       rated ("1"), daily.
# Returns {id, 0, start, table fields...} (start: claimed for owner), or {} if the id
# is taken.
CREATE_PRIVATE = (
    _PRELUDE
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return {} end
open_table(KEYS[1], ARGV[4], ARGV[5], '0', tonumber(ARGV[10]), ARGV[8], ARGV[9], 0, 0,
  ARGV[6], ARGV[7], tonumber(ARGV[11]))
redis.call('HSET', KEYS[1], 'spec', ARGV[15], 'p0', ARGV[16], 'r0', ARGV[17],
  'rated', ARGV[18], 'daily', ARGV[19])
if ARGV[12] == '1' then take(ARGV[4], ARGV[13], tonumber(ARGV[14])) end
bump(ARGV[4])
return reply({ARGV[4], 0, tonumber(ARGV[12])}, ARGV[4])
"""
)

# KEYS: table (the one its code points to), due.
# ARGV: home, now, chan, name, hash, lobby_ttl, owner, claim_ms, profile, rating.
# Returns {id, seat, start, table fields...} (start: full, and claimed for owner) or
# {error code}.
JOIN = (
    _PRELUDE
    + """
local tk = KEYS[1]
local f = redis.call('HMGET', tk, 'status', 'pub', 'players', 'humans', 'id')
if not f[1] or f[2] ~= '0' or f[1] == 'closed' then return {'no_code'} end
if f[1] ~= 'waiting' then return {'already_started'} end
local id = f[5]
local players = tonumber(f[3])
local seat = free_seat(tk, players)
if seat < 0 then return {'table_full'} end
redis.call('HSET', tk, 'n' .. seat, ARGV[4], 'k' .. seat, ARGV[5], 'p' .. seat, ARGV[9],
  'r' .. seat, ARGV[10], 'humans', tonumber(f[4]) + 1)
redis.call('PEXPIRE', tk, tonumber(ARGV[6]))
local start = 0
if free_seat(tk, players) < 0 then
  start = 1
  take(id, ARGV[7], tonumber(ARGV[8]))
end
bump(id)
return reply({id, seat, start}, id)
"""
)

# KEYS: table (the one the token points to), due.   ARGV: home, now, chan, seat, hash,
# done_ttl.   Only the token the seat holds may leave it.
# Returns {'ok', id, table fields...} or {error code}.
LEAVE = (
    _PRELUDE
    + """
local tk = KEYS[1]
local seat = ARGV[4]
local f = redis.call('HMGET', tk, 'status', 'creator', 'humans', 'players', 'pub',
  'deadline', 'created', 'id', 'k' .. seat)
if not f[1] or f[9] ~= ARGV[5] then return {'bad_token'} end
local id = f[8]
if f[1] == 'closed' then return reply({'ok', id}, id) end
if f[1] ~= 'waiting' then return {'already_started'} end
local humans = tonumber(f[3]) - 1
if f[2] == seat or humans <= 0 then
  close_table(id, tonumber(ARGV[6]))
  return reply({'ok', id}, id)
end
redis.call('HSET', tk, 'n' .. seat, '', 'k' .. seat, '', 'p' .. seat, '', 'r' .. seat, 0,
  'humans', humans)
if f[5] == '1' then
  redis.call('ZADD', qkey(f[4]), tonumber(f[7]), id)
  redis.call('ZADD', KEYS[2], tonumber(f[6]), id)
else
  redis.call('ZREM', KEYS[2], id)
end
bump(id)
return reply({'ok', id}, id)
"""
)

# KEYS: table, due.   ARGV: home, now, chan, owner, claim_ms.   Returns 1 if claimed.
CLAIM = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'id')
if f[1] ~= 'waiting' then return 0 end
take(f[2], ARGV[4], tonumber(ARGV[5]))
return 1
"""
)

# KEYS: due.   ARGV: home, now, chan, owner, claim_ms, limit.   Returns the ids claimed.
CLAIM_DUE = (
    _PRELUDE
    + """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[6]))
local out = {}
for _, id in ipairs(ids) do
  local status = redis.call('HGET', tkey(id), 'status')
  if status == 'waiting' or status == 'starting' then
    take(id, ARGV[4], tonumber(ARGV[5]))
    out[#out + 1] = id
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""
)

# KEYS: table, due.   ARGV: home, now, chan, owner, replica, done_ttl, (seat, bot name)...
# Returns the table's fields once recorded, or {} if the claim was lost.
FINISH = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner', 'id')
if f[1] ~= 'starting' or f[2] ~= ARGV[4] then return {} end
redis.call('HSET', KEYS[1], 'status', 'started', 'replica', ARGV[5], 'owner', '')
for i = 7, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'n' .. ARGV[i], ARGV[i + 1], 'b' .. ARGV[i], '1')
end
redis.call('ZREM', KEYS[2], f[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))
bump(f[3])
return reply({}, f[3])
"""
)

# KEYS: table, due.   ARGV: home, now, chan, owner, mode, retry_ms, max_attempts, done_ttl.
# Returns 'waiting', 'closed' or 'lost'.
RELEASE = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner', 'id', 'pub', 'humans', 'players',
  'created')
if f[1] ~= 'starting' or f[2] ~= ARGV[4] then return 'lost' end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if ARGV[5] == 'close' or (ARGV[5] == 'retry' and attempts >= tonumber(ARGV[7])) then
  close_table(f[3], tonumber(ARGV[8]))
  return 'closed'
end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'owner', '')
if ARGV[5] == 'retry' then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), f[3])
else
  redis.call('ZREM', KEYS[2], f[3])
end
if f[4] == '1' and tonumber(f[5]) < tonumber(f[6]) then
  redis.call('ZADD', qkey(f[6]), tonumber(f[7]), f[3])
end
return 'waiting'
"""
)

# KEYS: the rematch's table, due.
# ARGV: home, now, chan, old id, id, code (empty: do not open), players, rules, level,
#       seat, name, hash, lobby_ttl, rematch_ms, owner, claim_ms, spectators, profile,
#       rating, rated ("1"), then per seat: name, bot ("1").
# Whoever comes first (the rematch pointer already names this table) opens it: every
# seat reserved (the old names; bots stay bots), due after rematch_ms, and the old table's
# id published. Then the asker's seat takes the new token hash. Returns {id, seat, start,
# replaced token hash or '', table fields...} (start: every human answered, claimed for
# owner), or {error code}.
REMATCH = (
    _PRELUDE
    + """
local tk = KEYS[1]
local id = ARGV[5]
if redis.call('EXISTS', tk) == 0 then
  if ARGV[6] == '' then return {'no_rematch'} end
  local deadline = now + tonumber(ARGV[14])
  redis.call('HSET', tk, 'id', id, 'code', ARGV[6], 'pub', '0', 'players', ARGV[7],
    'rules', ARGV[8], 'level', ARGV[9], 'creator', -1, 'status', 'waiting', 'created', now,
    'deadline', deadline, 'replica', '', 'ver', 0, 'humans', 0, 'owner', '', 'attempts', 0,
    'spec', ARGV[17], 'rated', ARGV[20], 'daily', '')
  local i = 0
  for a = 21, #ARGV, 2 do
    redis.call('HSET', tk, 'n' .. i, ARGV[a])
    if ARGV[a + 1] == '1' then redis.call('HSET', tk, 'b' .. i, '1') end
    i = i + 1
  end
  redis.call('PEXPIRE', tk, tonumber(ARGV[13]))
  redis.call('ZADD', KEYS[2], deadline, id)
  redis.call('PUBLISH', chan, ARGV[4])
end
local f = redis.call('HMGET', tk, 'status', 'players')
if f[1] == 'closed' then return {'no_rematch'} end
if f[1] ~= 'waiting' then return {'already_started'} end
local seat = ARGV[10]
local old = redis.call('HGET', tk, 'k' .. seat)
local replaced = ''
if old and old ~= '' then
  replaced = old
else
  redis.call('HINCRBY', tk, 'humans', 1)
end
redis.call('HSET', tk, 'n' .. seat, ARGV[11], 'k' .. seat, ARGV[12], 'p' .. seat, ARGV[18],
  'r' .. seat, ARGV[19])
local start = 1
for i = 0, tonumber(f[2]) - 1 do
  local k = redis.call('HGET', tk, 'k' .. i)
  if redis.call('HGET', tk, 'b' .. i) ~= '1' and (not k or k == '') then start = 0 end
end
if start == 1 then take(id, ARGV[15], tonumber(ARGV[16])) end
bump(id)
return reply({id, tonumber(seat), start, replaced}, id)
"""
)

# KEYS: a code.   ARGV: table id, ttl (ms; "0": free it).
# Keeps (a new expiry) or frees the code only while it still names that table: a code is
# changed by its own table alone. Returns 1 if it did.
CODE_TTL = """
local v = redis.call('GET', KEYS[1])
if not v or string.match(v, '^(%S+)') ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 1
"""
