-- Pack one full chunk of a game's events (`service.store.archive`): append its packed
-- form to the archive and take its events out of the stream, both or neither. Packs
-- chunk k only while the archive holds k chunks and the stream holds all of the chunk's
-- events, so a second compaction at the same time changes nothing.
-- The stream is rebuilt from the events after the chunk (a few: the rest of the commit
-- that filled it) rather than trimmed: a trimmed stream keeps its deleted entries' bytes
-- in its last node until every entry of that node is gone.
-- With the chunk, the counts after its last event (its field `v`, each viewer's event
-- ids: `service.store.numbering`) go onto the chunk ids list, so a reader finds a
-- viewer's id among the packed events without unpacking them (event_find.lua).
-- KEYS: events (stream), archive (list)[, chunk ids (list)]
-- ARGV: 1 chunk index k  2 its first event number  3 its last  4 the packed chunk
-- Answers 1 when packed now, else 0.
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[1]) then return 0 end
local first, last = tonumber(ARGV[2]), tonumber(ARGV[3])
local got = redis.call('XRANGE', KEYS[1], first .. '-1', last .. '-1')
if #got ~= last - first + 1 or got[1][1] ~= first .. '-1' then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[4])
if KEYS[3] then
  local f = got[#got][2]
  for i = 1, #f, 2 do
    if f[i] == 'v' then redis.call('RPUSH', KEYS[3], f[i + 1]) end
  end
end
local rest = redis.call('XRANGE', KEYS[1], (last + 1) .. '-1', '+')
redis.call('DEL', KEYS[1])
for _, entry in ipairs(rest) do
  redis.call('XADD', KEYS[1], entry[1], unpack(entry[2]))
end
return 1
