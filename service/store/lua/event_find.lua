-- Where a viewer's events after its id `a` begin (`service.store.numbering`): the stored
-- number of the first event to read and the counts before it. The counts only grow,
-- so a binary search finds the event where the viewer's count reached `a`: over the
-- packed chunks' counts (`chunkids`, entry k after chunk k; the reader then reads that
-- chunk from its start and skips what the viewer had), else over the stream's entries
-- (field `v`), which hold every event after the packed ones.
-- KEYS: meta, events, chunk ids, archive (the packed chunks: as many as chunk ids)
-- ARGV: 1 the viewer's place in the counts (0 the public, k + 1 seat k)  2 `a`
--       3 events per chunk
-- Answers {'ok', first number to read, counts before it, counts now, event_seq},
-- {'legacy', event_seq} (a game stored before the counts) or {'no_game'}.
local m = redis.call('HMGET', KEYS[1], 'event_seq', 'event_ids', 'seats')
if not m[3] then return {'no_game'} end
local seq = tonumber(m[1] or '0')
local zero = {}
for i = 1, tonumber(m[3]) + 1 do zero[i] = '0' end
zero = table.concat(zero, ',')
local now = m[2]
if not now then
  if seq > 0 then return {'legacy', tostring(seq)} end
  now = zero
end
local place, a, chunk = tonumber(ARGV[1]) + 1, tonumber(ARGV[2]), tonumber(ARGV[3])
local function at(counts)
  local i = 0
  for x in string.gmatch(counts or '', '[^,]+') do
    i = i + 1
    if i == place then return tonumber(x) end
  end
  return 0
end
if a <= 0 then return {'ok', '1', zero, now, tostring(seq)} end
if a >= at(now) then return {'ok', tostring(seq + 1), now, now, tostring(seq)} end
local packed = redis.call('LLEN', KEYS[3])
if redis.call('LLEN', KEYS[4]) ~= packed then return {'legacy', tostring(seq)} end
if packed > 0 and at(redis.call('LINDEX', KEYS[3], packed - 1)) >= a then
  local lo, hi = 0, packed - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if at(redis.call('LINDEX', KEYS[3], mid)) >= a then hi = mid else lo = mid + 1 end
  end
  local before = zero
  if lo > 0 then before = redis.call('LINDEX', KEYS[3], lo - 1) end
  return {'ok', tostring(lo * chunk + 1), before, now, tostring(seq)}
end
local function counts(n)
  local got = redis.call('XRANGE', KEYS[2], n .. '-1', n .. '-1')
  if not got[1] then return nil end
  local f = got[1][2]
  for i = 1, #f, 2 do
    if f[i] == 'v' then return f[i + 1] end
  end
  return nil
end
-- The stream holds events packed * chunk + 1 .. seq; the count reaches `a` at one of them.
local lo, hi = packed * chunk + 1, seq
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if at(counts(mid)) >= a then hi = mid else lo = mid + 1 end
end
local found = counts(lo)
if not found then return {'legacy', tostring(seq)} end
return {'ok', tostring(lo + 1), found, now, tostring(seq)}
