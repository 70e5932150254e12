-- traces.lua - a LuaJIT workload for cgjit's samples/luajit-traces (see its README): a hot
-- loop (one root trace with a loop), a branch that turns hot only after the loop was
-- compiled (a side trace of it) and a phase that starts late (root traces compiled long
-- after the first ones). Deterministic: a fixed linear congruential generator, no clock.

local N = tonumber(arg and arg[1]) or 1000000

-- Phase 1: a histogram of pseudo-random numbers. The `if` below is taken for one number
-- in eight, too rarely to be part of the loop's trace: its exit gets hot and LuaJIT
-- compiles a side trace for it.
local function histogram(n, buckets)
	local h = {}
	for b = 1, buckets do h[b] = 0 end
	local x, big = 12345, 0
	for _ = 1, n do
		x = (x * 1103515245 + 12345) % 2147483648
		local b = x % buckets + 1
		h[b] = h[b] + 1
		if x % 8 == 0 then
			big = big + b
		end
	end
	return h, big
end

-- Phase 2, run once phase 1 is over: a prefix sum and a search over it, loops the JIT
-- has not seen before, so their traces are compiled late.
local function prefix(h)
	local s, acc = {}, 0
	for i = 1, #h do
		acc = acc + h[i]
		s[i] = acc
	end
	return s
end

local function median(s)
	local half, lo = s[#s] / 2, 1
	for i = 1, #s do
		if s[i] >= half then
			lo = i
			break
		end
	end
	return lo
end

local h, big = histogram(N, 64)
local total = 0
for _ = 1, 40 do
	local s = prefix(h)
	total = total + median(s) + s[#s] % 7
end
print(string.format("big %d total %d", big, total))
