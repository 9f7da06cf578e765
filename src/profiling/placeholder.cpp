namespace pypto {}
