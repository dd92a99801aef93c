-- The open step as the public sees it (GET /games/{id}/phases/current without a bearer
-- token), read atomically in one command: the game's status, the step's summary fields
-- and the seats that answered it (never what). The web process's fast path
-- (`service/http/fastpath.py`) answers a poll from this.
-- KEYS: meta, phase (the orders key of step N is the phase key's sibling `orders:N`)
-- Answers {} (no game), {status} (no step yet) or {status, fields, answered}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return {}
end
local ph = redis.call('HMGET', KEYS[2], 'id', 'status', 'kind', 'sealed', 'expected', 'opened_at', 'deadline',
                      'extended', 'paused_at')
if not ph[1] then
  return {status}
end
local answered = {}
if ph[2] ~= 'finished' then
  answered = redis.call('HKEYS', (string.gsub(KEYS[2], ':phase$', ':orders:' .. ph[1])))
end
return {status, ph, answered}
