/**
 * The Lua scripts of RedisSessionStorage. Redis runs a script alone, so every script here handles a bounded amount
 * of data (the chunk sizes of redis-chunks.ts): a large state is written as several chunk scripts into temporary
 * lists and made visible by one O(1) commit, and read as several chunk scripts checked against the meta hash's
 * `gen` (a token written by every save).
 */

// RPUSH in batches: Lua's unpack() has a stack limit of a few thousand values.
const PUSH = `local function push(key, first, last)
  for i = first, last, 1000 do redis.call('RPUSH', key, unpack(ARGV, i, math.min(i + 999, last))) end
end
`;

// KEYS: meta, tmpMessages, tmpUsage. ARGV: create ("1": stop when the session exists), ttlMs, nMessages, ...elements.
// The TTL, renewed by every chunk, removes the lists of a writer that died before its commit.
export const PUSH_CHUNK = `${PUSH}if ARGV[1] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[3])
push(KEYS[2], 4, 3 + n)
push(KEYS[3], 4 + n, #ARGV)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`;

// KEYS: meta, messages, usage, index, tmpMessages, tmpUsage.
// ARGV: id, createdAt, updatedAt, metadata, parentId, gen, create, totalMessages, totalUsage, nMessages, ...elements
// (the last chunk). Every check comes before the first visible write: Redis does not roll back a script that fails
// part-way. The old lists are UNLINKed (freed off the main thread) and the temporary ones RENAMEd into place, so a
// commit costs O(its own chunk) however large the old or the new state is. Returns 0 (and removes the temporary
// lists) when creating an existing session.
export const COMMIT = `${PUSH}local score = tonumber(ARGV[2])
if not score or score ~= score or score == math.huge or score == -math.huge then
  redis.call('UNLINK', KEYS[5], KEYS[6])
  return redis.error_reply('createdAt must be a finite number')
end
if ARGV[7] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('UNLINK', KEYS[5], KEYS[6])
  return 0
end
local n = tonumber(ARGV[10])
local m, u = tonumber(ARGV[8]), tonumber(ARGV[9])
if redis.call('LLEN', KEYS[5]) + n ~= m or redis.call('LLEN', KEYS[6]) + #ARGV - 10 - n ~= u then
  redis.call('UNLINK', KEYS[5], KEYS[6])
  return redis.error_reply('chunks written before the commit are missing (their TTL expired?)')
end
push(KEYS[5], 11, 10 + n)
push(KEYS[6], 11 + n, #ARGV)
redis.call('UNLINK', KEYS[2], KEYS[3])
if m > 0 then
  redis.call('RENAME', KEYS[5], KEYS[2])
  redis.call('PERSIST', KEYS[2])
end
if u > 0 then
  redis.call('RENAME', KEYS[6], KEYS[3])
  redis.call('PERSIST', KEYS[3])
end
redis.call('HSET', KEYS[1], 'createdAt', ARGV[2], 'updatedAt', ARGV[3], 'metadata', ARGV[4], 'parentId', ARGV[5],
  'gen', ARGV[6])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
return 1`;

// KEYS: tmpMessages, tmpUsage: a failed write's temporary lists.
export const DISCARD = "redis.call('UNLINK', KEYS[1], KEYS[2])\nreturn 1";

// KEYS: meta, messages, usage. ARGV: updatedAt, metadata ("" = unchanged), nMessages, ...elements
export const APPEND = `${PUSH}if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'metadata', ARGV[2]) end
local n = tonumber(ARGV[3])
push(KEYS[2], 4, 3 + n)
push(KEYS[3], 4 + n, #ARGV)
return 1`;

// Reads elements of the messages list from index ARGV[from], then (once it is read to its end) of the usage list,
// until `budget` bytes or `items` elements: LRANGE in batches of 16, so a chunk is at most
// budget + 16 * PIECE_BYTES bytes.
const TAKE = `local function take(key, from, out, budget, room)
  local bytes, n = 0, 0
  while bytes < budget and n < room do
    local want = math.min(16, room - n)
    local batch = redis.call('LRANGE', key, from + n, from + n + want - 1)
    for i = 1, #batch do
      out[#out + 1] = batch[i]
      bytes = bytes + #batch[i]
    end
    n = n + #batch
    if #batch < want then break end
  end
  return bytes, n
end
local function chunk(fromMessages, fromUsage, budget, items)
  local messages, usage = {}, {}
  local bytes, n = take(KEYS[2], fromMessages, messages, budget, items)
  if bytes < budget and n < items then take(KEYS[3], fromUsage, usage, budget - bytes, items - n) end
  return {redis.call('LLEN', KEYS[2]), redis.call('LLEN', KEYS[3]), messages, usage}
end
`;

// KEYS: meta, messages, usage. ARGV: budget, items, gen. Returns false for an unknown session, else
// {meta fields, messages length, usage length, first message elements, first usage elements}. A session stored
// without a gen (by an earlier release) that takes more than one chunk is given ARGV[3] as its gen: a save by such a
// release deletes the hash, so the next chunk sees the gen gone and the load starts over.
export const LOAD_FIRST = `${TAKE}local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
local c = chunk(0, 0, tonumber(ARGV[1]), tonumber(ARGV[2]))
if (#c[3] < c[1] or #c[4] < c[2]) and redis.call('HSETNX', KEYS[1], 'gen', ARGV[3]) == 1 then
  h = redis.call('HGETALL', KEYS[1])
end
return {h, c[1], c[2], c[3], c[4]}`;

// KEYS: meta, messages, usage. ARGV: gen, fromMessages, fromUsage, budget, items. Returns false when the session
// was deleted or replaced (another gen: start over), else as LOAD_FIRST. An append keeps the gen and only lengthens
// the lists, so what was read stays valid; the meta fields come with every chunk (a small hash), so they always
// match the lengths of the same moment, whoever appended.
export const LOAD_NEXT = `${TAKE}local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
if (redis.call('HGET', KEYS[1], 'gen') or '') ~= ARGV[1] then return false end
local c = chunk(tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))
return {h, c[1], c[2], c[3], c[4]}`;

// KEYS: meta, messages, usage, index. ARGV: id. UNLINK: a large session's lists are freed off the main thread.
export const DELETE = `redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1`;
