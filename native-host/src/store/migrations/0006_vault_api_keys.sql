-- The API keys of OpenAI-compatible model servers, one per server origin, sealed with the vault
-- key (AEAD, bound to the origin by its associated data). The origin stays readable: the panel
-- and `itinero-host vault status` say which servers have a key without the key.
CREATE TABLE vault_api_keys (
    server     TEXT    PRIMARY KEY,
    sealed     BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
