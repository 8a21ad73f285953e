"""The Lua scripts that make each table store change atomic in Redis.

A table's scripts run on its own keys only (``redis.keys``, in script order: meta, log,
state, replies, lease, complaint), so on a Redis Cluster each is one slot's. Every write to a live
table checks first that the lease holds the caller's owner string (ARGV[1]): a replica
that lost the table writes nothing. ``APPEND`` and ``SAVE`` given a lease time other
than 0 renew the lease in the same step.

The lease index's scripts (``lease_index.py``) each run on one index shard, a sorted set
scored by when each table's lease expires, in Redis's own clock (``TIME``); the pending
index's (``pending.py``: finished tables waiting for the archive) on one of its shards,
a sorted set scored by when a sweeper may take each table and a hash of when each finished.
"""

from __future__ import annotations

__all__ = [
    "ACQUIRE",
    "APPEND",
    "CLAIM_EXPIRED",
    "COMPLAIN",
    "COMPLAINED",
    "COUNT_EXPIRED",
    "CREATE",
    "DROP_ARCHIVED",
    "FINISH",
    "LEASE_OVERDUE",
    "NOTE_LEASES",
    "PENDING_ADD",
    "PENDING_CLAIM",
    "PENDING_REMOVE",
    "RELEASE",
    "RENEW",
    "SAVE",
]

_NOW_SRC = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# ARGV: meta, state, owner, lease ms. 1: created; 0: the id is taken.
CREATE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
redis.call('SET', KEYS[3], ARGV[2])
redis.call('SET', KEYS[5], ARGV[3], 'PX', ARGV[4])
return 1
"""
# ARGV: owner, index, move, state, reply field and version ('' for none), lease ms.
# 1: appended; 0: the log is not ``index`` long; -1: the lease is not the owner's.
APPEND = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], ARGV[5], ARGV[6]) end
if ARGV[7] ~= '0' then redis.call('PEXPIRE', KEYS[5], ARGV[7]) end
return 1
"""
# ARGV: owner, state, lease ms.
SAVE = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[3], ARGV[2])
if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[5], ARGV[3]) end
return 1
"""
COMPLAINED = "!"
"""What ``ACQUIRE`` answers an owner the gateways complained away while the complaint
cools (``COMPLAIN``): it may not take the table back yet."""
# ARGV: owner, lease ms. '': taken (or extended); '!': this owner was complained away
# from the table a moment ago (COMPLAIN); else the holder.
ACQUIRE = """
local holder = redis.call('GET', KEYS[5])
if holder and holder ~= ARGV[1] then return holder end
if redis.call('GET', KEYS[6]) == '!' .. ARGV[1] then return '!' end
redis.call('SET', KEYS[5], ARGV[1], 'PX', ARGV[2])
return ''
"""
# ARGV: owner, lease ms.
RENEW = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[5], ARGV[2])
return 1
"""
# ARGV: owner.
RELEASE = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[5])
return 1
"""
# A gateway could not reach the table's owner (ARGV[1], the holder it was told of): a
# complaint against it, KEYS[6], "since|owner" (Redis's clock), kept ARGV[3] ms after the
# latest. Once complaints against the same holder have stood ARGV[2] ms (the first one that
# long ago, the latest now), the lease is revoked: deleted, so the owner's next write or
# renewal is fenced off and it closes the table, and the complaint becomes "!owner" for
# ARGV[4] ms, while which that owner may not take the table back (ACQUIRE) and no new
# complaint is heard (a table moves by complaint at most once a cool-down).
# 'moved': the lease is not ARGV[1]'s (any more); 'cooling'; 'noted'; 'revoked'.
COMPLAIN = (
    """
local holder = redis.call('GET', KEYS[5])
if holder ~= ARGV[1] then return 'moved' end
local complaint = redis.call('GET', KEYS[6])
if complaint and string.sub(complaint, 1, 1) == '!' then return 'cooling' end
"""
    + _NOW_SRC
    + """
local since = now
if complaint then
  local sep = string.find(complaint, '|', 1, true)
  if sep and string.sub(complaint, sep + 1) == ARGV[1] then
    since = tonumber(string.sub(complaint, 1, sep - 1))
  end
end
if now - since >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[5])
  redis.call('SET', KEYS[6], '!' .. ARGV[1], 'PX', ARGV[4])
  return 'revoked'
end
redis.call('SET', KEYS[6], since .. '|' .. ARGV[1], 'PX', ARGV[3])
return 'noted'
"""
)
# One atomic step: the final state, and the lease turned into a tombstone no owner string
# can equal (an owner has a space), so no replica can take the table again, log its
# record a second time or write to it; every key then expires with the table.
# ARGV: owner, state, ttl ms, the tombstone.
FINISH = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[3], ARGV[2])
redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[3])
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return 1
"""
# Once its record is in the archive: every key of a finished table, and only of a finished
# one (the tombstone, ARGV[1]), is deleted. 1: deleted; 0: not a finished table (gone).
DROP_ARCHIVED = """
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
return 1
"""

_NOW = _NOW_SRC
# ARGV: mode ('XX': only tables still listed; 'NX': new ones), lease ms, then id, age pairs.
# A table's expiry is now + lease - age: age is how long ago its lease was last renewed.
NOTE_LEASES = (
    _NOW
    + """
local lease = tonumber(ARGV[2])
local args = {}
for i = 3, #ARGV, 2 do
  args[#args + 1] = now + lease - tonumber(ARGV[i + 1])
  args[#args + 1] = ARGV[i]
end
if #args > 0 then redis.call('ZADD', KEYS[1], ARGV[1], unpack(args)) end
return #args / 2
"""
)
COUNT_EXPIRED = _NOW + "return redis.call('ZCOUNT', KEYS[1], '-inf', now)\n"
# Up to ARGV[1] expired entries, each moved ARGV[2] ms ahead: the other sweepers pass over
# them meanwhile, and they come round again if this one does not adopt them. Id, ms since
# the entry expired (its old score) pairs.
CLAIM_EXPIRED = (
    _NOW
    + """
local limit = tonumber(ARGV[1])
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
local out = {}
for i = 1, #found, 2 do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), found[i])
  out[#out + 1] = found[i]
  out[#out + 1] = math.floor(now - tonumber(found[i + 1]))
end
return out
"""
)
# ARGV: id. How many ms ago its entry expired (0 if it has not yet); -1 if it is not listed.
LEASE_OVERDUE = (
    _NOW
    + """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return -1 end
return math.max(0, math.floor(now - tonumber(score)))
"""
)
# KEYS: the shard's sorted set (id -> when a sweeper may take it) and hash (id -> when it
# was listed, Redis's clock: its finish). ARGV: id, ms before a sweeper may take it.
# Listed once: a second add keeps the first's times. 1: listed now; 0: it was.
PENDING_ADD = (
    _NOW
    + """
if redis.call('HSETNX', KEYS[2], ARGV[1], now) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 'NX', now + tonumber(ARGV[2]), ARGV[1])
return 1
"""
)
# Up to ARGV[1] entries due, each moved ARGV[2] ms ahead (as CLAIM_EXPIRED): id, finish
# time pairs.
PENDING_CLAIM = (
    _NOW
    + """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), id)
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or tostring(now)
end
return out
"""
)
# ARGV: id.
PENDING_REMOVE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""
