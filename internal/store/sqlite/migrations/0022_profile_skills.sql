-- +goose Up
-- Skills per profile (issue 16, h16-skills): the skills a profile enables,
-- by name (a skill is a folder on disk, not a row). A profile with no row
-- here enables every skill. Rows of a deleted profile stay, unused, as the
-- profile's own row does.
CREATE TABLE profile_skills (
    profile_id TEXT NOT NULL,
    skill      TEXT NOT NULL,
    PRIMARY KEY (profile_id, skill)
) WITHOUT ROWID;
