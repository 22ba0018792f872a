SELECT count(*) FROM records WHERE kind <> 'filler'
