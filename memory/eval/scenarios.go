package eval

// Turn is one exchange of a past session.
type Turn struct {
	User, Assistant string
}

// Session is one past conversation with the respondent.
type Session struct {
	// Turns are the exchanges that carry facts; the three filler
	// exchanges are appended by the harness.
	Turns []Turn
	// Extraction is what a faithful extraction model answers when this
	// session is folded into facts (the operations, ids counted from 1 in
	// a fresh store). Only the scripted model uses it.
	Extraction string
}

// Scenario is one multi-session case: facts established, possibly
// contradicted or made stale, then a question asked in a fresh session.
type Scenario struct {
	ID       string
	Sessions []Session
	Question string
	// Expected: the answer is correct only if it contains one of these
	// phrases (whole words, case and accents ignored)...
	Expected []string
	// Forbidden: ...and none of these (stale values).
	Forbidden []string
}

// fillers are appended to every session so that the memory under test
// folds it (six more messages than the facts themselves).
var fillers = []Turn{
	{"Let's continue the questionnaire.", "Of course, let's go on."},
	{"Yes, I'm still here.", "Good, thank you."},
	{"Let me think a second.", "Take your time."},
}

// Scenarios returns the twelve scenarios of the memory eval.
func Scenarios() []Scenario {
	return []Scenario{
		{
			ID: "simple-retention",
			Sessions: []Session{{
				Turns:      []Turn{{"Hello, this is Claire Dubois. For the home visit, my building door code is 4B27X.", "Thank you, I have noted the door code."}},
				Extraction: `{"operations":[{"op":"add","fact":"Claire Dubois's building door code is 4B27X.","subject":"Claire Dubois"}]}`,
			}},
			Question: "What is this person's building access code?",
			Expected: []string{"4B27X"},
		},
		{
			ID: "contradicted-schedule",
			Sessions: []Session{
				{
					Turns:      []Turn{{"Please call me back in the evening, after 6 pm; I'm at work during the day.", "Understood, evenings after 6 pm."}},
					Extraction: `{"operations":[{"op":"add","fact":"Prefers to be called back in the evening, after 6 pm.","subject":"user"}]}`,
				},
				{
					Turns:      []Turn{{"Actually my hours changed: call me back in the morning, before 9 am.", "Noted, mornings before 9 am from now on."}},
					Extraction: `{"operations":[{"op":"update","id":1,"fact":"Prefers to be called back in the morning, before 9 am."}]}`,
				},
			},
			Question:  "At what time of day should we call this person back?",
			Expected:  []string{"morning", "mornings"},
			Forbidden: []string{"evening", "evenings"},
		},
		{
			ID: "stale-fact",
			Sessions: []Session{
				{
					Turns:      []Turn{{"Our household has two cars and a scooter.", "Thanks, two cars and a scooter."}},
					Extraction: `{"operations":[{"op":"add","fact":"The household owns two cars and a scooter.","subject":"household"}]}`,
				},
				{
					Turns:      []Turn{{"We sold the scooter last month.", "All right, I'll update that."}},
					Extraction: `{"operations":[{"op":"update","id":1,"fact":"The household owns two cars."}]}`,
				},
			},
			Question:  "Which vehicles does this household own today?",
			Expected:  []string{"two cars", "2 cars"},
			Forbidden: []string{"scooter"},
		},
		{
			ID: "numeric-value",
			Sessions: []Session{{
				Turns:      []Turn{{"The monthly rent for the flat is 743 euros, charges included.", "Thank you, noted."}},
				Extraction: `{"operations":[{"op":"add","fact":"Monthly rent is 743 euros, charges included.","subject":"user"}]}`,
			}},
			Question: "What is this person's monthly rent?",
			Expected: []string{"743"},
		},
		{
			ID: "several-facts",
			Sessions: []Session{{
				Turns: []Turn{
					{"I'm Marc Lefevre, I live in Villeurbanne and I work in the Part-Dieu business district.", "Noted."},
					{"I get to work by metro: line A, then line B.", "Thanks for the detail."},
				},
				Extraction: `{"operations":[{"op":"add","fact":"Marc Lefevre lives in Villeurbanne.","subject":"Marc Lefevre"},{"op":"add","fact":"Marc Lefevre works in the Part-Dieu business district.","subject":"Marc Lefevre"},{"op":"add","fact":"Marc Lefevre commutes by metro, line A then line B.","subject":"Marc Lefevre"}]}`,
			}},
			Question: "How does this person get to work?",
			Expected: []string{"metro", "subway"},
		},
		{
			ID: "contradicted-address",
			Sessions: []Session{
				{
					Turns:      []Turn{{"I live at 3 Mill Lane, in Oxford.", "Thank you, noted."}},
					Extraction: `{"operations":[{"op":"add","fact":"Lives at 3 Mill Lane, Oxford.","subject":"user"}]}`,
				},
				{
					Turns:      []Turn{{"I've moved: my new address is 12 Harbour Street, Portsmouth.", "Thanks, I've updated your address."}},
					Extraction: `{"operations":[{"op":"update","id":1,"fact":"Lives at 12 Harbour Street, Portsmouth."}]}`,
				},
			},
			Question:  "What is this person's current address?",
			Expected:  []string{"Harbour Street"},
			Forbidden: []string{"Mill Lane", "Oxford"},
		},
		{
			ID: "future-absence",
			Sessions: []Session{{
				Turns:      []Turn{{"I'll be away the whole of August, travelling in Portugal, so don't call then.", "Understood, no calls in August."}},
				Extraction: `{"operations":[{"op":"add","fact":"Will be away for the whole of August, travelling in Portugal; do not call then.","subject":"user"}]}`,
			}},
			Question: "When will this person be away?",
			Expected: []string{"August"},
		},
		{
			ID: "distractors",
			Sessions: []Session{{
				Turns: []Turn{
					{"My daughter takes bus line 27 to school.", "Noted."},
					{"My son cycles to his school.", "OK."},
					{"And I carpool with a colleague, but only on Thursdays.", "Got it."},
				},
				Extraction: `{"operations":[{"op":"add","fact":"Her daughter takes bus line 27 to school.","subject":"daughter"},{"op":"add","fact":"Her son cycles to school.","subject":"son"},{"op":"add","fact":"Carpools with a colleague on Thursdays only.","subject":"user"}]}`,
			}},
			Question: "Which day does this person carpool?",
			Expected: []string{"Thursday", "Thursdays"},
		},
		{
			ID: "double-contradiction",
			Sessions: []Session{
				{
					Turns:      []Turn{{"Call me on my landline, 01 45 67 89 10.", "Noted, the landline."}},
					Extraction: `{"operations":[{"op":"add","fact":"Prefers to be called on the landline, 01 45 67 89 10.","subject":"user"}]}`,
				},
				{
					Turns:      []Turn{{"Rather call me on my mobile, 06 12 34 56 78.", "Noted, the mobile."}},
					Extraction: `{"operations":[{"op":"update","id":1,"fact":"Prefers to be called on the mobile, 06 12 34 56 78."}]}`,
				},
				{
					Turns:      []Turn{{"In the end the landline is better after all: 01 45 67 89 10.", "Back to the landline, noted."}},
					Extraction: `{"operations":[{"op":"update","id":2,"fact":"Prefers to be called on the landline, 01 45 67 89 10."}]}`,
				},
			},
			Question: "Which phone number should we use to call this person?",
			Expected: []string{"01 45 67 89 10", "landline"},
		},
		{
			ID: "negative-preference",
			Sessions: []Session{{
				Turns:      []Turn{{"Never send me text messages. Phone calls only, please.", "Understood, calls only."}},
				Extraction: `{"operations":[{"op":"add","fact":"Never send text messages (SMS); phone calls only.","subject":"user"}]}`,
			}},
			Question: "May we send this person an SMS?",
			Expected: []string{"no", "never", "calls only", "only phone calls", "only calls"},
		},
		{
			ID: "job-and-employer",
			Sessions: []Session{{
				Turns:      []Turn{{"I'm a night-shift nurse at Saint-Louis Hospital.", "Thank you."}},
				Extraction: `{"operations":[{"op":"add","fact":"Works as a night-shift nurse at Saint-Louis Hospital.","subject":"user"}]}`,
			}},
			Question: "Where does this person work, and on what schedule?",
			Expected: []string{"Saint-Louis"},
		},
		{
			ID: "spelling-correction",
			Sessions: []Session{
				{
					Turns:      []Turn{{"My surname is Kowalczyk: K, O, W, A, L, C, Z, Y, K.", "Thank you, Mr Cowalczyk."}},
					Extraction: `{"operations":[{"op":"add","fact":"Surname is Cowalczyk.","subject":"user"}]}`,
				},
				{
					Turns:      []Turn{{"Last time my name was misspelled. It starts with a K: Kowalczyk.", "My apologies, Kowalczyk with a K."}},
					Extraction: `{"operations":[{"op":"update","id":1,"fact":"Surname is Kowalczyk, spelled with a K."}]}`,
				},
			},
			Question:  "What is this person's surname?",
			Expected:  []string{"Kowalczyk"},
			Forbidden: []string{"Cowalczyk"},
		},
	}
}
