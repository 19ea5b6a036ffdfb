DROP TABLE skill_archives;
