-- What each step cost in model time: the calls made to decide it (the plan's call counts with
-- the first step) and the largest prompt among them, in the backend's tokens.
ALTER TABLE steps ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN prompt_tokens INTEGER;
