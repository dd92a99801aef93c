-- What checking a signed read needs, read together with the store's clock in one command
-- (`Games.credentials`): who holds the key (a seat number as text, "host", or nil), that
-- seat's record, the host's public key (nil: no such game) and the time.
-- KEYS: keys, seats, meta
-- ARGV: kid
-- Answers {holder or nil, seat record or nil, host key or nil, {seconds, microseconds}}.
local holder = redis.call('HGET', KEYS[1], ARGV[1])
local seat = false
if holder and holder ~= 'host' then seat = redis.call('HGET', KEYS[2], holder) end
return {holder, seat, redis.call('HGET', KEYS[3], 'host_key'), redis.call('TIME')}
