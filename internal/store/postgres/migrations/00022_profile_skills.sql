-- +goose Up
-- Skills per profile (issue 16, h16-skills), as in SQLite's migration 22:
-- the skills a profile enables, by name; no row enables every skill.
CREATE TABLE profile_skills (
    profile_id TEXT COLLATE "C" NOT NULL,
    skill      TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (profile_id, skill)
);

-- +goose Down
DROP TABLE profile_skills;
