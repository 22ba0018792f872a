SELECT count(*) FROM agent_cards
