-- Record the outcomes of a commit's first webhook attempts in one call: per delivery,
-- the new record (built by the caller from the record it read) replaces the stored one
-- only if the stored text is still, byte for byte, the one the caller read, else it is
-- left as it is for the caller's slow path (a transaction that changes only the
-- outcome's fields: another job or the host changed the record meanwhile). The record
-- is never decoded here (cjson would turn [] into {}).
-- KEYS: 1 delivery (HASH)
-- ARGV: per delivery: its id, the text read, the new record (JSON)
-- Answers per delivery 1 (written) or 0 (changed meanwhile or gone: not written).
local out = {}
for i = 1, #ARGV, 3 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
