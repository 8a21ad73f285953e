"""The Lua scripts that make each matchmaker state change atomic in Redis.

Every script gets the key namespace as ARGV[1] and the time (unix ms) as ARGV[2]. All
keys share the namespace's hash tag (``mm:{mm}:``), so on Redis Cluster they live in one
slot and a script may touch keys it finds at run time (the oldest open table). Each
script mirrors one method of ``MemoryStore``; the contract tests hold them to the same
behaviour.
"""

from __future__ import annotations

__all__ = [
    "CLAIM",
    "CLAIM_DUE",
    "CREATE_PRIVATE",
    "FINISH",
    "JOIN_CODE",
    "LEAVE",
    "QUICK_JOIN",
    "RELEASE",
    "REMATCH",
]

_PRELUDE = """
local ns = ARGV[1]
local now = tonumber(ARGV[2])
local function tkey(id) return ns .. 't:' .. id end
local function qkey(players) return ns .. 'q:' .. players end
local function bump(id)
  redis.call('HINCRBY', tkey(id), 'ver', 1)
  redis.call('PUBLISH', ns .. 'ev', id)
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
local function seat_token(key, id, seat, ttl)
  redis.call('SET', key, id .. ' ' .. seat, 'PX', ttl)
end
local function open_table(tk, id, code, pub, players, rules, level, creator, deadline,
                          name, hash, ttl)
  redis.call('HSET', tk, 'id', id, 'code', code, 'pub', pub, 'players', players,
    'rules', rules, 'level', level, 'creator', creator, 'status', 'waiting',
    'created', now, 'deadline', deadline, 'replica', '', 'ver', 0, 'humans', 1,
    'owner', '', 'attempts', 0, 'n0', name, 'k0', hash)
  redis.call('PEXPIRE', tk, ttl)
end
local function take(id, owner, claim_ms)
  local tk = tkey(id)
  redis.call('HSET', tk, 'status', 'starting', 'owner', owner)
  redis.call('ZADD', ns .. 'due', now + claim_ms, id)
  redis.call('ZREM', qkey(redis.call('HGET', tk, 'players')), id)
end
local function close_table(id, done_ttl)
  local tk = tkey(id)
  local f = redis.call('HMGET', tk, 'players', 'code')
  redis.call('HSET', tk, 'status', 'closed', 'owner', '')
  redis.call('ZREM', ns .. 'due', id)
  redis.call('ZREM', qkey(f[1]), id)
  local ck = ns .. 'code:' .. f[2]
  if redis.call('GET', ck) == id then redis.call('DEL', ck) end
  redis.call('PEXPIRE', tk, done_ttl)
  bump(id)
end
"""

# KEYS: queue, due, new table, new code, token.
# ARGV: ns, now, players, name, hash, new id, new code, fill, fill_lone, lobby_ttl,
#       token_ttl, rules, level, owner, claim_ms.
# Returns {id, seat, start, table fields...} (start: full, and claimed for owner), or {} on
# a code collision.
QUICK_JOIN = (
    _PRELUDE
    + """
local players = tonumber(ARGV[3])
local name, hash = ARGV[4], ARGV[5]
local fill, fill_lone = tonumber(ARGV[8]), tonumber(ARGV[9])
local lobby_ttl, token_ttl = tonumber(ARGV[10]), tonumber(ARGV[11])
for _ = 1, 64 do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #oldest == 0 then break end
  local id = oldest[1]
  local tk = tkey(id)
  local f = redis.call('HMGET', tk, 'status', 'humans', 'deadline')
  local seat = -1
  if f[1] == 'waiting' then seat = free_seat(tk, players) end
  if seat < 0 then
    redis.call('ZREM', KEYS[1], id)
  else
    local humans = tonumber(f[2]) + 1
    local deadline = tonumber(f[3])
    if humans == 2 and now + fill < deadline then deadline = now + fill end
    redis.call('HSET', tk, 'n' .. seat, name, 'k' .. seat, hash, 'humans', humans,
      'deadline', deadline)
    local start = 0
    if free_seat(tk, players) < 0 then
      start = 1
      take(id, ARGV[14], tonumber(ARGV[15]))
    else
      redis.call('ZADD', KEYS[2], deadline, id)
    end
    seat_token(KEYS[5], id, seat, token_ttl)
    bump(id)
    return reply({id, seat, start}, id)
  end
end
if not redis.call('SET', KEYS[4], ARGV[6], 'NX', 'PX', lobby_ttl) then return {} end
local deadline = now + fill_lone
open_table(KEYS[3], ARGV[6], ARGV[7], '1', players, ARGV[12], ARGV[13], -1, deadline,
  name, hash, lobby_ttl)
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('ZADD', KEYS[2], deadline, ARGV[6])
seat_token(KEYS[5], ARGV[6], 0, token_ttl)
bump(ARGV[6])
return reply({ARGV[6], 0, 0}, ARGV[6])
"""
)

# KEYS: table, code, token, due.
# ARGV: ns, now, id, code, name, hash, rules, level, players, lobby_ttl, token_ttl,
#       start_now, owner, claim_ms, spectators ("1": open to them).
# Returns {id, 0, start, table fields...} (start: claimed for owner), or {} on a collision.
CREATE_PRIVATE = (
    _PRELUDE
    + """
local ttl = tonumber(ARGV[10])
if not redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ttl) then return {} end
open_table(KEYS[1], ARGV[3], ARGV[4], '0', tonumber(ARGV[9]), ARGV[7], ARGV[8], 0, 0,
  ARGV[5], ARGV[6], ttl)
redis.call('HSET', KEYS[1], 'spec', ARGV[15])
seat_token(KEYS[3], ARGV[3], 0, tonumber(ARGV[11]))
if ARGV[12] == '1' then take(ARGV[3], ARGV[13], tonumber(ARGV[14])) end
bump(ARGV[3])
return reply({ARGV[3], 0, tonumber(ARGV[12])}, ARGV[3])
"""
)

# KEYS: code, token, due.   ARGV: ns, now, name, hash, token_ttl, lobby_ttl, owner, claim_ms.
# Returns {id, seat, start, table fields...} (start: full, and claimed for owner) or
# {error code}.
JOIN_CODE = (
    _PRELUDE
    + """
local id = redis.call('GET', KEYS[1])
if not id then return {'no_code'} end
local tk = tkey(id)
local f = redis.call('HMGET', tk, 'status', 'pub', 'players', 'humans')
if not f[1] or f[2] ~= '0' or f[1] == 'closed' then return {'no_code'} end
if f[1] ~= 'waiting' then return {'already_started'} end
local players = tonumber(f[3])
local seat = free_seat(tk, players)
if seat < 0 then return {'table_full'} end
redis.call('HSET', tk, 'n' .. seat, ARGV[3], 'k' .. seat, ARGV[4],
  'humans', tonumber(f[4]) + 1)
local ttl = tonumber(ARGV[6])
redis.call('PEXPIRE', tk, ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
seat_token(KEYS[2], id, seat, tonumber(ARGV[5]))
local start = 0
if free_seat(tk, players) < 0 then
  start = 1
  take(id, ARGV[7], tonumber(ARGV[8]))
end
bump(id)
return reply({id, seat, start}, id)
"""
)

# KEYS: token, due.   ARGV: ns, now, done_ttl.
# Returns {'ok', id, table fields...} or {error code}.
LEAVE = (
    _PRELUDE
    + """
local v = redis.call('GET', KEYS[1])
if not v then return {'bad_token'} end
local id, seat = string.match(v, '^(%S+) (%d+)$')
local tk = tkey(id)
local f = redis.call('HMGET', tk, 'status', 'creator', 'humans', 'players', 'pub',
  'deadline', 'created')
if not f[1] then return {'bad_token'} end
if f[1] == 'closed' then
  redis.call('DEL', KEYS[1])
  return reply({'ok', id}, id)
end
if f[1] ~= 'waiting' then return {'already_started'} end
redis.call('DEL', KEYS[1])
local humans = tonumber(f[3]) - 1
if f[2] == seat or humans <= 0 then
  close_table(id, tonumber(ARGV[3]))
  return reply({'ok', id}, id)
end
redis.call('HSET', tk, 'n' .. seat, '', 'k' .. seat, '', 'humans', humans)
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

# KEYS: table, due.   ARGV: ns, now, owner, claim_ms.   Returns 1 if claimed.
CLAIM = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'id')
if f[1] ~= 'waiting' then return 0 end
take(f[2], ARGV[3], tonumber(ARGV[4]))
return 1
"""
)

# KEYS: due.   ARGV: ns, now, owner, claim_ms, limit.   Returns the ids claimed.
CLAIM_DUE = (
    _PRELUDE
    + """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))
local out = {}
for _, id in ipairs(ids) do
  local status = redis.call('HGET', tkey(id), 'status')
  if status == 'waiting' or status == 'starting' then
    take(id, ARGV[3], tonumber(ARGV[4]))
    out[#out + 1] = id
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""
)

# KEYS: table, due.   ARGV: ns, now, owner, replica, done_ttl, (seat, bot name)...
# Returns the table's fields once recorded, or {} if the claim was lost.
FINISH = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner', 'id', 'code')
if f[1] ~= 'starting' or f[2] ~= ARGV[3] then return {} end
redis.call('HSET', KEYS[1], 'status', 'started', 'replica', ARGV[4], 'owner', '')
for i = 6, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'n' .. ARGV[i], ARGV[i + 1], 'b' .. ARGV[i], '1')
end
redis.call('ZREM', KEYS[2], f[3])
local ttl = tonumber(ARGV[5])
redis.call('PEXPIRE', KEYS[1], ttl)
local ck = ns .. 'code:' .. f[4]
if redis.call('GET', ck) == f[3] then redis.call('PEXPIRE', ck, ttl) end
bump(f[3])
return reply({}, f[3])
"""
)

# KEYS: table, due.   ARGV: ns, now, owner, mode, retry_ms, max_attempts, done_ttl.
# Returns 'waiting', 'closed' or 'lost'.
RELEASE = (
    _PRELUDE
    + """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner', 'id', 'pub', 'humans', 'players',
  'created')
if f[1] ~= 'starting' or f[2] ~= ARGV[3] then return 'lost' end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if ARGV[4] == 'close' or (ARGV[4] == 'retry' and attempts >= tonumber(ARGV[6])) then
  close_table(f[3], tonumber(ARGV[7]))
  return 'closed'
end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'owner', '')
if ARGV[4] == 'retry' then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), f[3])
else
  redis.call('ZREM', KEYS[2], f[3])
end
if f[4] == '1' and tonumber(f[5]) < tonumber(f[6]) then
  redis.call('ZADD', qkey(f[6]), tonumber(f[7]), f[3])
end
return 'waiting'
"""
)

# KEYS: rematch of the old table, new table, new code, token, due.
# ARGV: ns, now, old id, new id, code, players, rules, level, seat, name, hash, lobby_ttl,
#       token_ttl, rematch_ms, owner, claim_ms, spectators, then per seat: name, bot ("1").
# The first to ask opens the rematch: every seat reserved (the old names; bots stay bots),
# due after rematch_ms. Then the asker's seat takes its new token. Returns {id, seat,
# start, table fields...} (start: every human answered, claimed for owner), {} on a code
# collision, or {error code}.
REMATCH = (
    _PRELUDE
    + """
local id = redis.call('GET', KEYS[1])
if id and redis.call('EXISTS', tkey(id)) == 0 then id = false end
if not id then
  local lobby_ttl = tonumber(ARGV[12])
  if not redis.call('SET', KEYS[3], ARGV[4], 'NX', 'PX', lobby_ttl) then return {} end
  id = ARGV[4]
  local deadline = now + tonumber(ARGV[14])
  redis.call('HSET', KEYS[2], 'id', id, 'code', ARGV[5], 'pub', '0', 'players', ARGV[6],
    'rules', ARGV[7], 'level', ARGV[8], 'creator', -1, 'status', 'waiting', 'created', now,
    'deadline', deadline, 'replica', '', 'ver', 0, 'humans', 0, 'owner', '', 'attempts', 0,
    'spec', ARGV[17])
  local i = 0
  for a = 18, #ARGV, 2 do
    redis.call('HSET', KEYS[2], 'n' .. i, ARGV[a])
    if ARGV[a + 1] == '1' then redis.call('HSET', KEYS[2], 'b' .. i, '1') end
    i = i + 1
  end
  redis.call('PEXPIRE', KEYS[2], lobby_ttl)
  redis.call('SET', KEYS[1], id, 'PX', lobby_ttl)
  redis.call('ZADD', KEYS[5], deadline, id)
  redis.call('PUBLISH', ns .. 'ev', ARGV[3])
end
local tk = tkey(id)
local f = redis.call('HMGET', tk, 'status', 'players')
if f[1] == 'closed' then return {'no_rematch'} end
if f[1] ~= 'waiting' then return {'already_started'} end
local seat = ARGV[9]
local old = redis.call('HGET', tk, 'k' .. seat)
if old and old ~= '' then
  redis.call('DEL', ns .. 'tok:' .. old)
else
  redis.call('HINCRBY', tk, 'humans', 1)
end
redis.call('HSET', tk, 'n' .. seat, ARGV[10], 'k' .. seat, ARGV[11])
seat_token(KEYS[4], id, seat, tonumber(ARGV[13]))
local start = 1
for i = 0, tonumber(f[2]) - 1 do
  local k = redis.call('HGET', tk, 'k' .. i)
  if redis.call('HGET', tk, 'b' .. i) ~= '1' and (not k or k == '') then start = 0 end
end
if start == 1 then take(id, ARGV[15], tonumber(ARGV[16])) end
bump(id)
return reply({id, tonumber(seat), start}, id)
"""
)
