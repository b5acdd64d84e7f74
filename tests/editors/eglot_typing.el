;;; eglot_typing.el --- Emacs -nw/Eglot driver for tests/editors/test_emacs.py  -*- lexical-binding: t -*-

;; Usage: emacs -nw -Q file.py -l tests/editors/eglot_typing.el, in a pseudo-terminal whose other end is
;; the test (env: see eglot_driver.el, and FLOWEDIT_EMACS_CONTROL: the test's TCP port on 127.0.0.1).
;; A real Emacs in a terminal goes idle like a user's, so Eglot's idle timer behaves as it does for one
;; (`eglot-send-changes-idle-time' 0.5 s, the default, and every other Eglot default but
;; `eglot-confirm-server-initiated-edits').  The user is the test: it presses keys in the terminal.
;;   C-c r  mark the target, run `flowedit.rewrite' on it (mode replace), go to the top of the buffer
;;   C-c k  type `k' the moment Eglot next reports a change: the user's key gets there before the edit
;;          the server sends on that report (it is then one for the version Eglot has just left)
;;   C-c o  go to another buffer (*notes*, no server): what the user types there is no change of the file
;;   C-c v  `flowedit.revert'
;;   C-c q  write the buffer and the summary, and exit (0 = the driver got through)
;; What happens is told to the test as JSON lines on the control connection: ready, rewriting, applied,
;; reported (a didChange), refused, typed, outcome, reverted.

(load (expand-file-name "eglot_driver.el" (file-name-directory load-file-name)) nil t)

(setq eglot-confirm-server-initiated-edits nil) ; else Eglot asks to confirm every streamed edit

(defvar flowedit-control nil "The connection to the test.")
(defvar flowedit-rewrite-id nil)

(defun flowedit-tell (event &rest data)
  "Send EVENT and the plist DATA to the test, as one JSON line."
  (process-send-string flowedit-control (concat (json-encode (append (list :event event) data)) "\n")))

(defmacro flowedit-guarded (&rest body)
  "BODY, with an error told to the test at once (it would otherwise only show in the echo area)."
  `(condition-case err (progn ,@body)
     (error (flowedit-fail "%S" err)
            (flowedit-tell "error" :error (format "%S" err)))))

(defun flowedit-test-rewrite ()
  (interactive)
  (flowedit-guarded
   (setq flowedit-rewrite-id (flowedit-rewrite (flowedit-target-range)))
   (deactivate-mark)
   (goto-char (point-min))              ; where the user goes on typing
   (flowedit-tell "rewriting" :id flowedit-rewrite-id)))

(defvar flowedit-key-on-report nil "The key C-c k armed.")

(defun flowedit-test-arm-key ()
  (interactive)
  (setq flowedit-key-on-report ?k))

(add-hook 'flowedit-on-did-change
          (lambda ()
            (flowedit-tell "reported" :did_change flowedit-did-change)
            (when flowedit-key-on-report
              ;; read by the command loop as soon as the idle timer that reports returns, like a key
              (push flowedit-key-on-report unread-command-events)
              (setq flowedit-key-on-report nil)
              (flowedit-tell "typed" :after_did_change flowedit-did-change))))

(defun flowedit-test-other-buffer ()
  (interactive)
  (switch-to-buffer (get-buffer-create "*notes*"))
  (flowedit-tell "elsewhere"))

(defun flowedit-test-revert ()
  (interactive)
  (flowedit-guarded
   (let ((result (flowedit-revert)))
     (flowedit-tell "reverted" :result result :ms (alist-get 'revert_ms flowedit-summary)))))

(defun flowedit-test-quit ()
  (interactive)
  (flowedit-finish))

(add-hook 'flowedit-on-apply
          (lambda (applied)
            (if (eq applied t)
                (flowedit-tell "applied" :applied flowedit-applied)
              (flowedit-tell "refused" :refused (length flowedit-refused) :message applied))))

(add-hook 'flowedit-on-status
          (lambda (_status)
            (let ((outcome (and flowedit-rewrite-id (flowedit-outcome flowedit-rewrite-id))))
              (when (and outcome (not (alist-get 'outcome flowedit-summary)))
                (flowedit-note 'outcome outcome)
                (flowedit-note 'streamed (flowedit-text))
                (flowedit-say "outcome %S, %d edits applied, %d refused" outcome flowedit-applied
                              (length flowedit-refused))
                (flowedit-tell "outcome" :outcome outcome)))))

(global-set-key (kbd "C-c r") #'flowedit-test-rewrite)
(global-set-key (kbd "C-c k") #'flowedit-test-arm-key)
(global-set-key (kbd "C-c o") #'flowedit-test-other-buffer)
(global-set-key (kbd "C-c v") #'flowedit-test-revert)
(global-set-key (kbd "C-c q") #'flowedit-test-quit)

(condition-case err
    (progn
      (setq flowedit-control
            (make-network-process :name "flowedit-control" :host "127.0.0.1" :noquery t
                                  :service (string-to-number (flowedit-env "FLOWEDIT_EMACS_CONTROL"))))
      (flowedit-connect)
      (flowedit-tell "ready" :idle_time eglot-send-changes-idle-time))
  (error (flowedit-fail "%S" err)
         (flowedit-finish)))
;;; eglot_typing.el ends here
